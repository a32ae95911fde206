/**
 * Test-only bridge to Qwen3-VL's processor in `transformers` (and `renderers`' `Qwen3VLRenderer`
 * over it), in the engine venv, which has the processor's dependencies (torch, torchvision,
 * Pillow): `qwen3_vl_images_reference.py`.
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
export async function withQwen3VlProcessor(
  modelDir: string,
  cases: ProcessorCase[],
): Promise<ProcessorResult[]> {
  return await runReferenceScript(
    "qwen3_vl_images_reference.py",
    [modelDir],
    cases,
    ENGINE_PYTHON,
  ) as ProcessorResult[];
}
