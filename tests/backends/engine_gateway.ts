/**
 * A real gateway (in-process `Deno.serve` on a loopback port) wired to the fake vLLM and SGLang
 * servers through the real `VllmBackend` / `SglangBackend`, plus the official `openai` SDK as the
 * agent.
 *
 * @module
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { createGateway, type Gateway } from "../../gateway/mod.ts";
import { SglangBackend, type VllmApi, VllmBackend } from "../../generation/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import {
  answerText,
  sharedModel,
  type TextScript,
  toolCallText,
} from "../support/scripted_policy.ts";
import { FakeSglang, FakeVllm } from "./fake_engines.ts";

export const ENGINE_MODEL = "Qwen/Qwen3-0.6B";

export const READ_FILE = {
  type: "function" as const,
  function: {
    name: "read_file",
    description: "Read a file from the workspace.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    },
  },
};

/** Calls `read_file` until a tool result is in the prompt, then answers. */
export const toolThenAnswer: TextScript = ({ text }) =>
  text.includes("<tool_response>")
    ? answerText("The file says hello.", "The README says hello.")
    : toolCallText("I should read the README.", "read_file", { path: "README.md" });

export interface ApiResult {
  status: number;
  // deno-lint-ignore no-explicit-any
  json: any;
}

export interface Rig {
  model: PolicyModel;
  vllm: FakeVllm;
  sglang: FakeSglang;
  gw: Gateway;
  url: string;
  api(method: string, path: string, body?: unknown): Promise<ApiResult>;
  /** A rollout through `POST /api/rollouts`, asserted 201. */
  rollout(spec?: Record<string, unknown>): Promise<{ id: string; token: string; base_url: string }>;
  /** The official SDK pointed at a rollout, without SDK-side retries. */
  agent(r: { token: string; base_url: string }): OpenAI;
  close(): Promise<void>;
}

export async function startRig(o: {
  timeoutMs?: number;
  retries?: number;
  defaultBackend?: string;
  script?: TextScript;
  /** The vLLM backend asks for a streamed answer. */
  vllmStream?: boolean;
  /** The SGLang server routes MoE experts and the backend asks for them (issue 24). */
  sglangRouting?: { layers: number; topK: number; experts: number };
  /** The vLLM server offers its RL API (`/inference/v1/generate`); `"disabled"`: a 403 there. */
  vllmScaleOut?: boolean | "disabled";
  /** The vLLM server returns MoE routing (`--enable-return-routed-experts`). */
  vllmRouting?: { layers: number; topK: number };
  /** The vLLM server returns kept sets (`--return-sampling-mask`). */
  vllmSamplingMask?: boolean;
  /** The endpoint the vLLM backend is told to use (default: probed). */
  vllmApi?: VllmApi;
} = {}): Promise<Rig> {
  const model = await sharedModel();
  const script = o.script ?? toolThenAnswer;
  const vllm = new FakeVllm(model, script).start();
  vllm.scaleOut = o.vllmScaleOut ?? false;
  vllm.routedExperts = o.vllmRouting;
  vllm.samplingMask = o.vllmSamplingMask ?? false;
  const sglang = new FakeSglang(model, script).start();
  sglang.routedExperts = o.sglangRouting;
  const engine = { timeoutMs: o.timeoutMs ?? 30_000, retries: o.retries ?? 2, backoffMs: 10 };
  const gw = createGateway({
    model,
    keepAliveMs: 200,
    backends: {
      vllm: new VllmBackend({
        url: vllm.url,
        model: ENGINE_MODEL,
        stream: o.vllmStream,
        api: o.vllmApi,
        ...engine,
      }),
      sglang: new SglangBackend({ url: sglang.url, routedExperts: o.sglangRouting, ...engine }),
    },
    defaultBackend: o.defaultBackend,
    // A client that leaves is gone at once here (the grace for its retry is tested elsewhere).
    timeouts: { abandonGraceMs: 50 },
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const api = async (method: string, path: string, body?: unknown): Promise<ApiResult> => {
    const res = await fetch(`${url}/api${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  return {
    model,
    vllm,
    sglang,
    gw,
    url,
    api,
    async rollout(spec = {}) {
      const r = await api("POST", "/rollouts", spec);
      assert.equal(r.status, 201, JSON.stringify(r.json));
      return r.json;
    },
    agent: (r) => new OpenAI({ baseURL: `${r.base_url}/v1`, apiKey: r.token, maxRetries: 0 }),
    async close() {
      await server.shutdown();
      await Promise.all([vllm.close(), sglang.close()]);
    },
  };
}
