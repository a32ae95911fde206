import { PolicyModel } from "./model/mod.ts";
const dir = Deno.readTextFileSync("/tmp/glmdir").trim();
const lines = Deno.readTextFileSync("/tmp/case.jsonl").trim().split("\n");
const c = JSON.parse(lines[0]);
const msgs = c.messages.map((m: any) => m.role === "assistant" ? {role: "assistant", content: m.content, reasoning_content: m.reasoning_content, tool_calls: m.tool_calls.map((t: any) => ({id: t.id, name: t.function.name, arguments: t.function.arguments}))} : m);
const tools = [{name: "bash", kind: "function", parameters: {type: "object"}}];
for (const family of ["glm-4.5", "glm-5", "glm-5.1"]) {
  const m = await PolicyModel.load({ dir, family });
  console.log(JSON.stringify((await m.renderFull(msgs, tools as any)).text));
}
