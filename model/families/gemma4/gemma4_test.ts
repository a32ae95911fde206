import assert from "node:assert/strict";
import { Num } from "../../python_json.ts";
import { gemmaValue } from "./declarations.ts";
import { parseGemmaValue } from "./output.ts";
import { gemmaCall } from "./render.ts";

Deno.test("gemma4: values in Gemma's syntax, keys sorted case-insensitively, and read back", () => {
  const args = '{"b": [1, 2.5, true, null], "A": {"x": "s"}, "c": "<tool_call|> }"}';
  const written = gemmaCall("bash", args);
  assert.equal(
    written,
    '<|tool_call>call:bash{A:{x:<|"|>s<|"|>},b:[1,2.5,true,null],c:<|"|><tool_call|> }<|"|>}' +
      "<tool_call|>",
  );
  const body = written.slice("<|tool_call>call:bash".length, -"<tool_call|>".length);
  const back = parseGemmaValue(body) as Map<string, unknown>;
  assert.deepEqual([...back.keys()], ["A", "b", "c"]);
  assert.deepEqual(back.get("b"), [new Num("1"), new Num("2.5"), true, null]);
  assert.equal(back.get("c"), "<tool_call|> }");
  assert.equal(gemmaValue({ k: "v" }), '{<|"|>k<|"|>:<|"|>v<|"|>}');
  for (const bad of ["{a:", '{a:<|"|>open}', "{a:1}}", "{:1}"]) {
    assert.equal(parseGemmaValue(bad), undefined, bad);
  }
});
