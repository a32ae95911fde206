/**
 * Test-only bridge to a vision family's processor in `transformers` (Qwen3-VL's, Gemma 4's) and
 * `renderers`' renderer over it, in the engine venv, which has the processors' dependencies
 * (torch, torchvision, Pillow): `vision_reference.py`.
 *
 * @module
 */
import { ENGINE_PYTHON, engineMissing } from "../support/vllm_server.ts";
import { runReferenceScript } from "./python_env.ts";

export { engineMissing as processorMissing };

export type ProcessorCase =
  | { op: "count"; sizes: [number, number][] }
  | { op: "process"; paths: string[] }
  | { op: "expand"; text: string; paths: string[] }
  | { op: "render"; messages: unknown[]; tools: unknown[] | null; add_generation_prompt: boolean };

export interface ProcessorResult {
  tokens?: number[];
  sizes?: [number, number][];
  ids?: number[];
  /** `render`: each image's pads as `[offset, length]`. */
  images?: [number, number][];
  error?: string;
}

/** Runs every case in one process (the processor is built once from `modelDir`). */
export async function withVisionProcessor(
  modelDir: string,
  family: "qwen3-vl" | "gemma4",
  cases: ProcessorCase[],
): Promise<ProcessorResult[]> {
  return await runReferenceScript(
    "vision_reference.py",
    [modelDir, family],
    cases,
    ENGINE_PYTHON,
  ) as ProcessorResult[];
}
