import assert from "node:assert/strict";
import { rawMember } from "./json_member.ts";

Deno.test("rawMember: returns the member's source text verbatim", () => {
  assert.equal(rawMember('{"name": "f", "arguments": {"a":  1}}', "arguments"), '{"a":  1}');
  assert.equal(rawMember('{"name": "f", "arguments": {"a":  1}}', "name"), '"f"');
  assert.equal(
    rawMember('{ "arguments" :\n\t{"x": [1, {"y": "}"}], "z": "\\"{"} , "k": 2 }', "arguments"),
    '{"x": [1, {"y": "}"}], "z": "\\"{"}',
  );
});

Deno.test("rawMember: scalar and array values", () => {
  const json = '{"n": -1.50e3, "t": true, "f": false, "z": null, "s": "a,b}", "a": [1, [2], "]"]}';
  assert.equal(rawMember(json, "n"), "-1.50e3");
  assert.equal(rawMember(json, "t"), "true");
  assert.equal(rawMember(json, "f"), "false");
  assert.equal(rawMember(json, "z"), "null");
  assert.equal(rawMember(json, "s"), '"a,b}"');
  assert.equal(rawMember(json, "a"), '[1, [2], "]"]');
});

Deno.test("rawMember: escaped and unicode keys, strings with escapes", () => {
  const json = '{"a\\"b": 1, "ключ": "значение", "\\u006b": {"q": "\\\\"}}';
  assert.equal(rawMember(json, 'a"b'), "1");
  assert.equal(rawMember(json, "ключ"), '"значение"');
  // Keys compare by their decoded value.
  assert.equal(rawMember(json, "k"), '{"q": "\\\\"}');
});

Deno.test("rawMember: last duplicate wins (as JSON.parse), missing key, non-objects", () => {
  assert.equal(rawMember('{"a": 1, "a": {"b": 2}}', "a"), '{"b": 2}');
  assert.equal(JSON.stringify(JSON.parse('{"a": 1, "a": {"b": 2}}').a), '{"b":2}');
  assert.equal(rawMember('{"a": 1}', "b"), undefined);
  assert.equal(rawMember("{}", "a"), undefined);
  assert.equal(rawMember("  { }  ", "a"), undefined);
  assert.equal(rawMember("[1, 2]", "a"), undefined);
  assert.equal(rawMember('"a"', "a"), undefined);
});

Deno.test("rawMember: the raw text parses to the same value as JSON.parse gives", () => {
  const docs = [
    '{"name": "bash", "arguments": {"command": "echo \\"hi\\" > /tmp/x", "timeout": 1.0}}',
    '{"arguments":{"a":[{"b":{"c":[]}}],"d":"\\u00e9"},"name":"x"}',
    '{"name": "f", "arguments": {"emoji": "😀", "nl": "a\\nb", "tab": "\\t"}}',
  ];
  for (const doc of docs) {
    const raw = rawMember(doc, "arguments")!;
    assert.deepEqual(JSON.parse(raw), JSON.parse(doc).arguments);
    assert.ok(doc.includes(raw));
  }
});
