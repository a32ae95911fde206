/**
 * The end-to-end HTTP path in one process: `createGateway` served by `Deno.serve` on a loopback
 * port, an agent speaking OpenAI Chat to `/rollout/:id/v1/chat/completions`, and a trainer
 * answering each pending request through `/api/requests/next` + `/complete`.
 *
 * @module
 */
import { createGateway } from "../gateway/mod.ts";
import { toCanonicalRequest } from "../gateway/agent/openai_chat/mod.ts";
import type { PolicyModel } from "../model/mod.ts";
import { TurnTree } from "../trajectory/mod.ts";
import { agentSteps, sampledText, SYSTEM_PROMPT, TASK } from "./agent_history.ts";
import { chatBody, type WireMessage } from "./chat_agent.ts";

export { chatBody };
import { newToolResult, resetter, SizeGoal } from "./turn_fixture.ts";

const JSON_HEADERS = { "content-type": "application/json" };

export interface HttpGateway {
  url: string;
  /**
   * One agent turn over HTTP (`body` from {@linkcode chatBody}) with the trainer answering
   * `outputIds`; returns the agent's response body.
   */
  turn(body: string, outputIds: number[]): Promise<string>;
  /** Primes a rollout like `primeRollout`, over HTTP. */
  prime(targetTokens: number, lines: [number, number], seed: number): Promise<PrimedHttpRollout>;
  close(): Promise<void>;
}

export interface PrimedHttpRollout {
  /** Wire history ending with the last assistant message, as the agent echoes it. */
  history: WireMessage[];
  lastCallId: string;
  promptTokens: number;
  reset(): void;
}

/**
 * @param counting the model that counts a tool result's delta when priming (default `model`;
 *   an engine-rendered model renders no deltas)
 */
export async function startHttpGateway(
  model: PolicyModel,
  counting: PolicyModel = model,
): Promise<HttpGateway> {
  const gw = createGateway({ model });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, gw.app.fetch);
  server.unref();
  const url = `http://127.0.0.1:${server.addr.port}`;
  const created = await fetch(`${url}/api/rollouts`, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify({ id: "bench-http" }),
  });
  const { id, token } = await created.json() as { id: string; token: string };
  const logprobsFor = new Map<number[], number[]>();

  async function trainer(outputIds: number[]): Promise<void> {
    const next = await fetch(`${url}/api/requests/next?wait=30&rollout=${id}`);
    if (next.status !== 200) throw new Error(`trainer next: ${next.status} ${await next.text()}`);
    const pending = await next.json() as { request_id: string; prompt_ids: number[] };
    let logprobs = logprobsFor.get(outputIds);
    if (!logprobs) logprobsFor.set(outputIds, logprobs = outputIds.map((_, i) => -i / 1000));
    const done = await fetch(`${url}/api/requests/${pending.request_id}/complete`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({ output_ids: outputIds, logprobs, finish_reason: "stop" }),
    });
    if (!done.ok) throw new Error(`trainer complete: ${done.status} ${await done.text()}`);
    await done.body?.cancel();
  }

  async function agent(body: string): Promise<string> {
    const res = await fetch(`${url}/rollout/${id}/v1/chat/completions`, {
      method: "POST",
      headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` },
      body,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`agent turn: ${res.status} ${text}`);
    return text;
  }

  const turn = async (body: string, outputIds: number[]) => {
    const [text] = await Promise.all([agent(body), trainer(outputIds)]);
    return text;
  };

  async function prime(target: number, lines: [number, number], seed: number) {
    const newToolTokens = (await counting.renderDeltaIds([newToolResult("call_x", 0)])).ids.length;
    const steps = agentSteps(seed, lines);
    const history: WireMessage[] = [{ ...SYSTEM_PROMPT }, { ...TASK }];
    const goal = new SizeGoal(target);
    for (;;) {
      const step = steps.next().value!;
      const outputIds = await model.tokenizer.encode(sampledText(step));
      const text = await turn(chatBody(history, false), outputIds);
      const body = JSON.parse(text);
      const message = body.choices[0].message;
      history.push(message);
      const promptTokens = body.usage.prompt_tokens + body.usage.completion_tokens + newToolTokens;
      if (goal.reached(promptTokens)) {
        const rollout = gw.store.get(id)!;
        const canonical = toCanonicalRequest(JSON.parse(chatBody(history, false)));
        const anchor = rollout.tree.mount(canonical.messages, TurnTree.rootKey(canonical))
          .node;
        if (rollout.turns.some((t) => t.mount === "rewritten" || t.mount === "rerendered")) {
          throw new Error("HTTP priming: a turn did not extend its predecessor");
        }
        return {
          history,
          lastCallId: message.tool_calls[0].id,
          promptTokens,
          reset: resetter(rollout, anchor),
        };
      }
      history.push({ role: "tool", tool_call_id: message.tool_calls[0].id, content: step.output });
    }
  }

  return { url, turn, prime, close: () => server.shutdown() };
}
