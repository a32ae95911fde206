import assert from "node:assert/strict";
import type { TurnAnswer } from "../../../canonical/mod.ts";
import { answerFromRecord, loadGeminiSession } from "./__fixtures__/gemini_cli.ts";
import { toGenerateContentResponse, usageMetadata } from "./response.ts";
import { reasoningOf } from "./thought_signature.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** A body without its signatures, and the signatures by part index. */
function unsigned(body: Json): { body: Json; signatures: Record<number, string> } {
  const copy = structuredClone(body);
  const signatures: Record<number, string> = {};
  copy.candidates[0].content.parts.forEach((p: Json, i: number) => {
    if (p.thoughtSignature) signatures[i] = p.thoughtSignature;
    delete p.thoughtSignature;
  });
  return { body: copy, signatures };
}

function answer(
  message: Partial<TurnAnswer["message"]>,
  extra: Partial<TurnAnswer> = {},
): TurnAnswer {
  return {
    id: "t9",
    model: "policy",
    message: { role: "assistant", content: "", ...message },
    stopReason: message.tool_calls ? "tool_calls" : "stop",
    usage: { input_tokens: 12, output_tokens: 34, reasoning_tokens: 0, cached_tokens: 0 },
    created: 0,
    ...extra,
  };
}

Deno.test("fixture: the JSON body the CLI was sent, but the signature rides on the text part", () => {
  const [record] = loadGeminiSession("json-to-stream");
  const recorded = unsigned(record.response.json);
  const ours = unsigned(toGenerateContentResponse(answerFromRecord(record)));
  assert.deepEqual(ours.body, recorded.body);
  assert.deepEqual(Object.keys(recorded.signatures), ["2"], "the API signs the call");
  assert.deepEqual(
    Object.keys(ours.signatures),
    ["1"],
    "the gateway signs the first part after it",
  );
  assert.equal(reasoningOf(ours.signatures[1]), "I should run a command.");
});

Deno.test("parts: signature on the first call when there is no text; none without reasoning", () => {
  const call = { id: "call_1", name: "ls", arguments: '{"path": "."}' };
  const parts = (m: Partial<TurnAnswer["message"]>) =>
    toGenerateContentResponse(answer(m)).candidates[0].content.parts;
  const callOnly = parts({ reasoning_content: "think", tool_calls: [call, { ...call, id: "c2" }] });
  assert.equal(callOnly.length, 3);
  assert.deepEqual(callOnly[0], { text: "think", thought: true });
  assert.deepEqual(callOnly[1].functionCall, { id: "call_1", name: "ls", args: { path: "." } });
  assert.equal(reasoningOf(callOnly[1].thoughtSignature!), "think");
  assert.equal(callOnly[2].thoughtSignature, undefined);
  assert.deepEqual(parts({ content: "hi" }), [{ text: "hi" }]);
  assert.deepEqual(parts({}), [{ text: "" }], "an empty answer still has a part");
  const thinkingOnly = parts({ reasoning_content: "hmm" });
  assert.equal(reasoningOf(thinkingOnly[1].thoughtSignature!), "hmm");
  assert.equal(thinkingOnly[1].text, "");
  // Arguments that are not a JSON object never become a non-object `args`.
  assert.deepEqual(
    parts({ tool_calls: [{ ...call, arguments: "[1]" }] })[0].functionCall!.args,
    {},
  );
});

Deno.test("finish reason and usage in policy tokens", () => {
  const long = toGenerateContentResponse(answer({ content: "cut" }, { stopReason: "length" }));
  assert.equal(long.candidates[0].finishReason, "MAX_TOKENS");
  assert.equal(
    toGenerateContentResponse(answer({ tool_calls: [{ id: "c", name: "f", arguments: "{}" }] }))
      .candidates[0].finishReason,
    "STOP",
  );
  assert.deepEqual(long.usageMetadata, {
    promptTokenCount: 12,
    candidatesTokenCount: 34,
    totalTokenCount: 46,
  });
  assert.deepEqual(
    usageMetadata({
      input_tokens: 100,
      output_tokens: 30,
      reasoning_tokens: 10,
      cached_tokens: 80,
    }),
    {
      promptTokenCount: 100,
      candidatesTokenCount: 20,
      totalTokenCount: 130,
      thoughtsTokenCount: 10,
      cachedContentTokenCount: 80,
    },
  );
});
