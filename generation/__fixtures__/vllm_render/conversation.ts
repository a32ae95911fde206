/**
 * The conversation the recorded render exchanges are about (`tests/engine/record_render_fixtures.ts`
 * records them, `vllm_render_wire_test.ts` reads them): a tool loop with reasoning.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../../canonical/mod.ts";

export const tools: ToolSpec[] = [{
  name: "get_weather",
  description: "The weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  kind: "function",
}];

export const toolLoop: Message[] = [
  { role: "system", content: "You answer briefly." },
  { role: "user", content: "Weather in Paris?" },
  {
    role: "assistant",
    content: "",
    reasoning_content: "I will look it up.",
    tool_calls: [{ id: "call_1", name: "get_weather", arguments: '{"city": "Paris"}' }],
  },
  { role: "tool", content: "sunny", tool_call_id: "call_1" },
];
