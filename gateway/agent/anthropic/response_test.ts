import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import type { TurnAnswer } from "../../../canonical/mod.ts";
import { answerFromRecord, loadCapture } from "./__fixtures__/load.ts";
import { mapStopReason, type MessageResponse, toMessageResponse } from "./response.ts";

/**
 * The SDK's `Message`, reduced to the fields the real API sends for these blocks (the SDK also
 * declares nullable extras such as `container`, `citations`, `caller`). Assigning our body to it
 * checks at compile time that every field we send has the SDK's name and type.
 */
type SdkMessage =
  & Pick<Anthropic.Message, "id" | "type" | "role" | "model" | "stop_reason" | "stop_sequence">
  & {
    content: Array<
      | Pick<Anthropic.ThinkingBlock, "type" | "thinking" | "signature">
      | Pick<Anthropic.TextBlock, "type" | "text">
      | Pick<Anthropic.ToolUseBlock, "type" | "id" | "name" | "input">
    >;
    usage: Required<
      Pick<
        Anthropic.Usage,
        "input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens"
      >
    >;
  };

Deno.test("fixture reply 1 as a non-streaming message", () => {
  const [record] = loadCapture();
  const answer = answerFromRecord(record);
  const body: SdkMessage = toMessageResponse(answer);
  assert.deepEqual(body, {
    id: "msg_6ddc29850e6e5dbd1ad5eedd",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content: [
      { ...record.reply.blocks[0], signature: "rollgate:6ddc29850e6e5dbd1ad5eedd" },
      record.reply.blocks[1],
      record.reply.blocks[2],
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 100,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  });
});

Deno.test("fixture reply 2 as a non-streaming message", () => {
  const [, record] = loadCapture();
  const body = toMessageResponse(answerFromRecord(record));
  assert.equal(body.stop_reason, "end_turn");
  assert.deepEqual(body.content.map((b) => b.type), ["thinking", "text"]);
  assert.deepEqual(body.content[1], {
    type: "text",
    text: "Done: created probe.txt and listed the directory.",
  });
});

function answer(message: Partial<TurnAnswer["message"]>, extra: Partial<TurnAnswer> = {}) {
  return {
    id: "t1",
    model: "policy",
    message: { role: "assistant" as const, content: "", ...message },
    stopReason: "stop" as const,
    usage: { input_tokens: 5000, output_tokens: 7, reasoning_tokens: 3, cached_tokens: 4000 },
    created: 0,
    ...extra,
  };
}

Deno.test("empty reasoning and empty text produce no blocks", () => {
  assert.deepEqual(toMessageResponse(answer({ reasoning_content: "" })).content, []);
  assert.deepEqual(toMessageResponse(answer({ content: "hi" })).content, [
    { type: "text", text: "hi" },
  ]);
});

Deno.test("usage reports the full prompt as input_tokens, not minus the cached part", () => {
  assert.deepEqual(toMessageResponse(answer({ content: "x" })).usage, {
    input_tokens: 5000,
    output_tokens: 7,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  });
});

Deno.test("tool_use input is the parsed arguments; several calls keep their order", () => {
  const body: MessageResponse = toMessageResponse(answer({
    tool_calls: [
      { id: "toolu_a", name: "Read", arguments: '{"file_path": "/x", "limit": 3}' },
      { id: "toolu_b", name: "Bash", arguments: '{"command":"ls"}' },
    ],
  }, { stopReason: "tool_calls" }));
  assert.deepEqual(body.content, [
    { type: "tool_use", id: "toolu_a", name: "Read", input: { file_path: "/x", limit: 3 } },
    { type: "tool_use", id: "toolu_b", name: "Bash", input: { command: "ls" } },
  ]);
  assert.equal(body.stop_reason, "tool_use");
});

Deno.test("arguments that are not a JSON object become {}", () => {
  for (const bad of ["not json", "[1]", "null", '"s"']) {
    const body = toMessageResponse(
      answer({ tool_calls: [{ id: "t", name: "n", arguments: bad }] }),
    );
    assert.deepEqual(body.content, [{ type: "tool_use", id: "t", name: "n", input: {} }]);
  }
});

Deno.test("mapStopReason", () => {
  assert.equal(mapStopReason("stop"), "end_turn");
  assert.equal(mapStopReason("length"), "max_tokens");
  assert.equal(mapStopReason("tool_calls"), "tool_use");
  assert.equal(
    toMessageResponse(answer({ content: "x" }, { stopReason: "length" })).stop_reason,
    "max_tokens",
  );
});
