import assert from "node:assert/strict";
import { parseOrderedJson } from "./families/ordered_json.ts";
import {
  Num,
  pythonFloatRepr,
  pythonJson,
  pythonJsonDumps,
  pythonScalarStr,
  pythonStrip,
} from "./python_json.ts";

Deno.test("pythonFloatRepr: Python's repr(float) (values checked with CPython 3.11)", () => {
  const cases: [number, string][] = [
    [0.1, "0.1"],
    [1, "1.0"],
    [-0.5, "-0.5"],
    [-0, "-0.0"],
    [2.5e-3, "0.0025"],
    [1e-4, "0.0001"],
    [1e-5, "1e-05"],
    [1.5e-7, "1.5e-07"],
    [1e15, "1000000000000000.0"],
    [1e16, "1e+16"],
    [123456789012345680, "1.2345678901234568e+17"],
    [9999999999999998, "9999999999999998.0"],
    [1 / 3, "0.3333333333333333"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [Infinity, "inf"],
    [NaN, "nan"],
  ];
  for (const [x, repr] of cases) assert.equal(pythonFloatRepr(x), repr, String(x));
});

Deno.test("pythonJsonDumps: separators, key order, ints vs floats as written", () => {
  const v = parseOrderedJson(
    '{"b": 1.0, "2": [1, 2.5e-3, 1E2, -0, true, null], "é": "\\u00e9\\n"}',
  );
  assert.equal(
    pythonJsonDumps(v),
    '{"b": 1.0, "2": [1, 0.0025, 100.0, 0, true, null], "é": "é\\n"}',
  );
  // Plain JavaScript values: integral numbers are ints.
  assert.equal(
    pythonJsonDumps({ a: 1, b: 0.5, c: [], d: {} }),
    '{"a": 1, "b": 0.5, "c": [], "d": {}}',
  );
  assert.equal(pythonJsonDumps(new Num("1e400")), "Infinity");
});

Deno.test("pythonScalarStr: str() of scalars; containers as json.dumps", () => {
  assert.equal(pythonScalarStr(true), "True");
  assert.equal(pythonScalarStr(null), "None");
  assert.equal(pythonScalarStr(new Num("3")), "3");
  assert.equal(pythonScalarStr(new Num("3.0")), "3.0");
  assert.equal(pythonScalarStr(new Num("1e400")), "inf");
  assert.equal(pythonScalarStr("x"), "x");
  assert.equal(pythonScalarStr(parseOrderedJson('{"a": [false]}')), '{"a": [false]}');
});

Deno.test("pythonStrip: Python's whitespace, not JavaScript's", () => {
  assert.equal(pythonStrip(" \t\n x y \r\n"), "x y");
  assert.equal(pythonStrip("\u001c\u0085\u3000x\u00a0"), "x");
  // U+FEFF is whitespace to JavaScript's trim, not to Python.
  assert.equal(pythonStrip("\ufeffx\ufeff"), "\ufeffx\ufeff");
  assert.equal("\ufeffx".trim(), "x");
  assert.equal(pythonStrip(""), "");
});

Deno.test("pythonJson: numbers as spelled, ensure_ascii on or off", () => {
  assert.equal(pythonJson({ a: new Num("1.0"), b: [2, "é"] }), '{"a": 1.0, "b": [2, "é"]}');
  assert.equal(pythonJson({ s: "é😀" }, true), '{"s": "\\u00e9\\ud83d\\ude00"}');
  assert.equal(pythonJson(new Map([["2", 1], ["a", null]])), '{"2": 1, "a": null}');
});

Deno.test("pythonJsonDumps with indent: json.dumps(indent=4), empty containers bare", () => {
  assert.equal(
    pythonJsonDumps({ a: [1, { b: "é" }], c: {}, d: [] }, { indent: 4 }),
    '{\n    "a": [\n        1,\n        {\n            "b": "é"\n        }\n    ],\n' +
      '    "c": {},\n    "d": []\n}',
  );
});
