/**
 * Gemini's `generateContent` over real HTTP against an in-process gateway, the scripted policy
 * (TEST DOUBLE) answering the gate: a tool call, then the answer, sent back the way the Gemini CLI
 * sends history (thought parts dropped, the signature kept); `countTokens`; the bare `/v1beta`
 * routes with `x-goog-api-key` and `?key=`. (The Gemini CLI itself, with the Google SDK inside it,
 * runs in `tests/e2e/gemini_cli_test.ts`.)
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Message } from "../../canonical/mod.ts";
import {
  call,
  FINAL_REASONING,
  FINAL_TEXT,
  getRollout,
  READ_FILE_TOOL,
  type RolloutHandle,
  startGateway,
  TOOL_ARGS,
  TOOL_REASONING,
  TOOL_RESULT,
} from "./loopback_gateway.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const SYSTEM = "You are a careful coding agent.";
const TASK = "What does the README say?";
const PATH = "v1beta/models/rollgate-policy";

const first = {
  systemInstruction: { parts: [{ text: SYSTEM }] },
  contents: [{ role: "user", parts: [{ text: TASK }] }],
  tools: [{
    functionDeclarations: [{
      name: READ_FILE_TOOL.name,
      description: READ_FILE_TOOL.description,
      parametersJsonSchema: READ_FILE_TOOL.parameters,
    }],
  }],
  generationConfig: { temperature: 1, thinkingConfig: { includeThoughts: true } },
};

/** The history after the call, as the Gemini CLI sends it: no thought parts, the rest verbatim. */
function second(answer: Json): Json {
  const parts: Json[] = answer.candidates[0].content.parts;
  const call = parts.find((p) => p.functionCall).functionCall;
  return {
    ...first,
    contents: [
      ...first.contents,
      { role: "model", parts: parts.filter((p) => !p.thought) },
      {
        role: "user",
        parts: [{
          functionResponse: { id: call.id, name: call.name, response: { output: TOOL_RESULT } },
        }],
      },
    ],
  };
}

function post(url: string, body: unknown, headers: Record<string, string>) {
  return call(url, { method: "POST", headers, body });
}

const keyed = (r: Pick<RolloutHandle, "token">) => ({ "x-goog-api-key": r.token });

Deno.test("gemini generateContent: a tool call, then the answer; the signature brings the reasoning back", async () => {
  const gw = await startGateway();
  try {
    const rollout = await gw.rollout();
    const policy = gw.policy(undefined, { rollout: rollout.id });
    const base = `${gw.url}/rollout/${rollout.id}/${PATH}`;
    const a = await post(`${base}:generateContent`, first, keyed(rollout));
    assert.equal(a.status, 200, JSON.stringify(a.json));
    const [thought, fc] = a.json.candidates[0].content.parts;
    assert.deepEqual(thought, { text: TOOL_REASONING, thought: true });
    assert.equal(fc.functionCall.name, READ_FILE_TOOL.name);
    assert.deepEqual(fc.functionCall.args, TOOL_ARGS);
    assert.match(fc.functionCall.id, /^call_/);
    assert.ok(fc.thoughtSignature, "the call carries the signature (there is no text)");
    assert.equal(a.json.candidates[0].finishReason, "STOP");
    assert.equal(a.json.modelVersion, "rollgate-policy");

    const b = await post(`${base}:generateContent`, second(a.json), keyed(rollout));
    assert.equal(b.status, 200, JSON.stringify(b.json));
    const parts = b.json.candidates[0].content.parts;
    assert.deepEqual(parts.map((p: Json) => p.text), [FINAL_REASONING, FINAL_TEXT]);
    assert.ok(parts[1].thoughtSignature);

    const { turn_list: turns } = await getRollout(gw, rollout.id);
    assert.equal(turns.length, 2);
    const tree = (await gw.api("GET", `/rollouts/${rollout.id}/tree`)).json;
    assert.deepEqual(tree.turns.map((t: Json) => t.mount), ["root", "extend"]);
    assert.equal(tree.chains.length, 1, "one chain: the echo matched the recorded turn");
    // Usage in policy tokens: the prompt, the output split into reasoning and the rest.
    for (const [i, res] of [a, b].entries()) {
      const u = res.json.usageMetadata;
      const rec = policy.records[i];
      assert.equal(u.promptTokenCount, rec.prompt_ids.length);
      assert.equal(u.totalTokenCount, rec.prompt_ids.length + rec.output_ids.length);
      assert.equal(u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0), rec.output_ids.length);
      assert.ok(u.thoughtsTokenCount > 0);
      assert.equal(turns[i].prompt_length, u.promptTokenCount);
    }
    assert.equal(
      b.json.usageMetadata.cachedContentTokenCount,
      a.json.usageMetadata.totalTokenCount,
    );
  } finally {
    await gw.close();
  }
});

Deno.test("gemini: without the gateway's signature the echoed turn is not the recorded one", async () => {
  const gw = await startGateway();
  try {
    const rollout = await gw.rollout();
    gw.policy(undefined, { rollout: rollout.id });
    const base = `${gw.url}/rollout/${rollout.id}/${PATH}`;
    const a = await post(`${base}:generateContent`, first, keyed(rollout));
    const echo = second(a.json);
    for (const p of echo.contents[1].parts) p.thoughtSignature = "skip_thought_signature_validator";
    assert.equal((await post(`${base}:generateContent`, echo, keyed(rollout))).status, 200);
    const tree = (await gw.api("GET", `/rollouts/${rollout.id}/tree`)).json;
    assert.notEqual(tree.turns[1].mount, "extend", "the reasoning is missing from the history");
  } finally {
    await gw.close();
  }
});

Deno.test("gemini countTokens and the bare /v1beta routes: the rollout from x-goog-api-key or ?key=", async () => {
  const gw = await startGateway();
  try {
    const mine = await gw.rollout();
    const other = await gw.rollout();
    const policy = gw.policy(undefined, { rollout: mine.id });
    const history: Message[] = [{ role: "system", content: SYSTEM }, {
      role: "user",
      content: TASK,
    }];
    const tools = [{
      name: READ_FILE_TOOL.name,
      kind: "function" as const,
      raw: first.tools[0].functionDeclarations[0],
      description: READ_FILE_TOOL.description,
      parameters: READ_FILE_TOOL.parameters,
    }];
    const full = await gw.gw.model.renderFull(history, tools);
    const bare = `${gw.url}/${PATH}`;
    const counted = await post(
      `${bare}:countTokens`,
      { generateContentRequest: first },
      keyed(mine),
    );
    assert.deepEqual(counted.json, { totalTokens: full.ids.length });
    const byQuery = await post(`${bare}:countTokens?key=${mine.token}`, {
      contents: first.contents,
    }, {});
    assert.equal(byQuery.status, 200);
    assert.ok(byQuery.json.totalTokens < counted.json.totalTokens, "no system, no tools: shorter");
    assert.equal((await getRollout(gw, mine.id)).turn_list.length, 0, "counting records nothing");

    const streamed = await fetch(`${bare}:streamGenerateContent?alt=sse&key=${mine.token}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(first),
    });
    const text = await streamed.text();
    assert.equal(streamed.status, 200, text);
    assert.ok(text.startsWith("data: "), "no SSE comment: Google's SDKs cannot skip one");
    const chunks = text.trim().split("\n\n").map((e) => JSON.parse(e.slice("data: ".length)));
    assert.equal(chunks.at(-1).candidates[0].finishReason, "STOP");
    assert.equal(chunks.at(-1).usageMetadata.promptTokenCount, counted.json.totalTokens);
    assert.deepEqual(policy.records[0].prompt_ids, full.ids);
    assert.equal((await getRollout(gw, mine.id)).turn_list.length, 1);
    assert.equal((await getRollout(gw, other.id)).turn_list.length, 0);
  } finally {
    await gw.close();
  }
});
