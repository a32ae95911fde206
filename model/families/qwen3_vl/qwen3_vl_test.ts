import assert from "node:assert/strict";
import { PolicyModel } from "../../policy_model.ts";

Deno.test("qwen3-vl: hermes turns on Qwen3's vocabulary; its image tokens are added tokens", async () => {
  const model = await PolicyModel.load({ family: "qwen3-vl" });
  const vision = model.format.vision!;
  for (const token of [vision.start, vision.pad, vision.end]) {
    assert.equal((await model.tokenizer.encode(token)).length, 1, token);
  }
  const { text } = await model.renderFull([
    { role: "user", content: "hi" },
    { role: "assistant", content: "Ok.", tool_calls: [{ id: "a", name: "ls", arguments: "{}" }] },
    { role: "tool", content: "x", tool_call_id: "a" },
  ], []);
  assert.equal(
    text,
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nOk.\n<tool_call>\n" +
      '{"name": "ls", "arguments": {}}\n</tool_call><|im_end|>\n<|im_start|>user\n' +
      "<tool_response>\nx\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
  );
});
