import assert from "node:assert/strict";
import { isIntegerText, type Num } from "../python_json.ts";
import { parseOrderedJson, tryParseOrderedJson } from "./ordered_json.ts";

Deno.test("parseOrderedJson: key order as written, integer-like keys included", () => {
  const v = parseOrderedJson('{"b": 1, "2": 2, "a": {"10": null, "1": true}}') as Map<
    string,
    unknown
  >;
  assert.deepEqual([...v.keys()], ["b", "2", "a"]);
  assert.deepEqual([...(v.get("a") as Map<string, unknown>).keys()], ["10", "1"]);
  // JavaScript objects reorder them.
  assert.deepEqual(Object.keys(JSON.parse('{"b": 1, "2": 2}')), ["2", "b"]);
});

Deno.test("parseOrderedJson: numbers keep their spelling; ints and floats as Python reads them", () => {
  const [a, b, c, d] = parseOrderedJson("[1, 1.0, -2.5e-3, 12345678901234567890]") as Num[];
  assert.deepEqual([a.text, b.text, c.text, d.text], [
    "1",
    "1.0",
    "-2.5e-3",
    "12345678901234567890",
  ]);
  assert.deepEqual([a, b, c, d].map((n) => isIntegerText(n.text)), [
    true,
    false,
    false,
    true,
  ]);
});

Deno.test("parseOrderedJson: a repeated key keeps its first place and its last value", () => {
  const v = parseOrderedJson('{"a": 1, "b": 2, "a": 3}') as Map<string, Num>;
  assert.deepEqual([...v].map(([k, n]) => [k, n.text]), [["a", "3"], ["b", "2"]]);
});

Deno.test("parseOrderedJson: strings, escapes, nesting, whitespace", () => {
  assert.deepEqual(
    parseOrderedJson(' [ "a\\"b\\\\c\\u00e9\\ud83d\\ude00", [], {} , false ] '),
    ['a"b\\cé😀', [], new Map(), false],
  );
});

Deno.test("parseOrderedJson: invalid JSON is a SyntaxError (tryParseOrderedJson: undefined)", () => {
  for (const bad of ["", "{", '{"a" 1}', "[1,]", "01", "1.", "NaN", '"\n"', "{} {}", "tru"]) {
    assert.throws(() => parseOrderedJson(bad), SyntaxError, bad);
    assert.equal(tryParseOrderedJson(bad), undefined, bad);
  }
  assert.throws(() => parseOrderedJson("[".repeat(600) + "]".repeat(600)), SyntaxError);
});
