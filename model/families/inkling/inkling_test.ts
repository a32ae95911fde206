import assert from "node:assert/strict";
import { PolicyModel } from "../../policy_model.ts";
import { TEMPLATE_DOUBLES, tokenizerDoubleDir } from "../../../tests/support/tokenizer_doubles.ts";
import { INK } from "./render.ts";

const dir = await tokenizerDoubleDir("inkling", TEMPLATE_DOUBLES.inkling);
const model = await PolicyModel.load({ dir });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
let n = 0;
const id = () => `c${n++}`;
const parse = async (text: string) => model.parse(await model.tokenizer.encode(text), id);

Deno.test("inkling: segments read back; a call's payload may hold <|end_message|>", async () => {
  assert.equal(model.family, "inkling");
  const args = '{"command":"echo <|end_message|> done"}';
  const out = await parse(
    `${INK.thinking}Plan.${INK.end}${INK.model}${INK.text}Running.${INK.end}${INK.model}bash` +
      `${INK.invoke}{"name":"bash","args":${args}}${INK.end}${INK.endSampling}`,
  );
  assert.equal(out.malformedToolCalls, 0);
  assert.deepEqual(out.message, {
    role: "assistant",
    content: "Running.",
    reasoning_content: "Plan.",
    tool_calls: [{ id: out.message.tool_calls![0].id, name: "bash", arguments: args }],
  });
});

Deno.test("inkling: a call that does not parse stays text, counted; streaming stops at a call", async () => {
  const bad = `bash${INK.invoke}{"name":"bash","args":}`;
  const out = await parse(`${INK.text}Ok.${INK.end}${INK.model}${bad}${INK.end}${INK.endSampling}`);
  assert.equal(out.malformedToolCalls, 1);
  assert.equal(out.message.content, "Ok." + bad);
  const stream = model.format.streamingParser();
  const ids = await model.tokenizer.encode(
    `${INK.text}Ok.${INK.end}${INK.model}${bad}${INK.end}${INK.model}${INK.text}After.${INK.end}`,
  );
  const sent = await stream.push(ids);
  assert.equal(sent.text, "Ok.", "what follows a call segment comes from the complete parse");
});
