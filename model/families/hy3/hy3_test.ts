import assert from "node:assert/strict";
import { HY3 } from "./render.ts";
import { splitHy3ToolCalls } from "./tool_calls.ts";

const id = () => "c";
const call = (name: string, key: string, value: string) =>
  `${HY3.toolCall}${name}${HY3.toolSep}\n${HY3.argKey}${key}${HY3.argKeyEnd}\n` +
  `${HY3.argValue}${value}${HY3.argValueEnd}\n${HY3.toolCallEnd}\n`;

Deno.test("hy3: calls in the section, a value holding Hy3's markup, text verbatim", () => {
  const tricky = `x ${HY3.argValueEnd}\n${HY3.toolCallEnd} y`;
  const text = ` Ok.\n${HY3.toolCalls}\n${call("bash", "command", tricky)}${call("ls", "p", ".")}` +
    HY3.toolCallsEnd;
  const split = splitHy3ToolCalls(text, [], id);
  assert.equal(split.content, " Ok.\n");
  assert.equal(split.malformed, 0);
  assert.deepEqual(split.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]), [
    ["bash", { command: tricky }],
    ["ls", { p: "." }],
  ]);
  // Cut off before `</tool_calls>`: the complete calls are calls.
  const open = splitHy3ToolCalls(`${HY3.toolCalls}\n${call("ls", "p", ".")}`, [], id);
  assert.deepEqual([open.toolCalls.length, open.malformed], [1, 0]);
});

Deno.test("hy3: a section that does not parse stays text, counted", () => {
  for (
    const bad of [
      `${HY3.toolCalls}\n${HY3.toolCall}ls\n${HY3.toolCallEnd}\n${HY3.toolCallsEnd}`, // no sep
      `${HY3.toolCalls}\nstray${HY3.toolCallsEnd}`,
      `${HY3.toolCalls}\n${call("ls", "p", ".")}text after${HY3.toolCallsEnd}`,
    ]
  ) {
    const split = splitHy3ToolCalls("Run." + bad, [], id);
    assert.deepEqual([split.content, split.toolCalls.length], ["Run." + bad, 0]);
    assert.ok(split.malformed >= 1, bad);
  }
});
