/**
 * Deterministic, realistic coding-agent traffic for the benches: a system prompt, three tools,
 * and an endless stream of tool-call loops (reasoning + one call, then a multi-line tool output
 * of code-like text: numbered source files, grep hits, pytest tracebacks, diffs).
 *
 * Everything is generated from a seed, so two runs build the same histories token for token.
 *
 * @module
 */
import { rng } from "../tests/invariants/random_text.ts";
import type { AssistantMessage, SystemMessage, ToolSpec, UserMessage } from "../canonical/mod.ts";
import { toolCallMessage, toolCallText } from "../runner/mod.ts";

export const SYSTEM_PROMPT: SystemMessage = {
  role: "system",
  content: [
    "You are a coding agent working in a sandboxed checkout of a software repository.",
    "Use the tools to inspect files, run commands and edit code; prefer small, verifiable steps.",
    "Read the relevant code before editing it, and run the tests that cover a change after it.",
    "Never ask for confirmation: the environment is disposable. The working directory is",
    "/workspace/repo. When the task is done, reply with a short summary of what changed.",
  ].join("\n"),
};

export const TASK: UserMessage = {
  role: "user",
  content: "tests/test_config_loader.py::test_reload_keeps_overrides fails after the cache " +
    "refactor. Find the cause, fix it without weakening the test, and make sure the rest of " +
    "the suite still passes.",
};

export const TOOLS: ToolSpec[] = [
  {
    name: "bash",
    kind: "function",
    description: "Run a shell command in the repository and return its combined output.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line to run with bash -lc." },
        timeout: { type: "integer", description: "Seconds before the command is killed." },
      },
      required: ["command"],
    },
  },
  {
    name: "read_file",
    kind: "function",
    description: "Read a text file with line numbers.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        offset: { type: "integer", description: "First line to read (1-based)." },
        limit: { type: "integer", description: "Maximum number of lines." },
      },
      required: ["path"],
    },
  },
  {
    name: "edit_file",
    kind: "function",
    description: "Replace one exact occurrence of old_string with new_string in a file.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        old_string: { type: "string" },
        new_string: { type: "string" },
      },
      required: ["path", "old_string", "new_string"],
    },
  },
];

/** One loop of the agent: what it samples (reasoning + call) and what the tool answers. */
export interface AgentStep {
  reasoning: string;
  tool: string;
  args: Record<string, unknown>;
  output: string;
}

export { rng };

const WORDS = [
  "config",
  "loader",
  "path",
  "cache",
  "token",
  "request",
  "session",
  "handler",
  "value",
  "index",
  "buffer",
  "result",
  "item",
  "node",
  "schema",
  "field",
  "record",
  "batch",
  "stream",
  "event",
  "worker",
  "queue",
  "state",
  "retry",
  "timeout",
  "client",
  "override",
  "source",
  "entry",
  "key",
];
const TYPES = ["str", "int", "bool", "dict[str, Any]", "list[str]", "Path", "Optional[str]"];
const ERRORS = ["ValueError", "KeyError", "ConfigError", "TimeoutError", "RuntimeError"];
const THOUGHTS = [
  "The override dict is rebuilt on every reload, so values set before the reload are lost.",
  "I should check where the cache key is computed; it may ignore the overrides.",
  "Let me look at the call site before changing anything.",
  "The traceback points at the merge step; the order of the two dicts matters here.",
  "That grep shows two writers of the cache, one of them in the watcher thread.",
  "The fix should keep the public signature unchanged.",
  "Run the focused test first, then the whole module.",
  "This helper is only used by the loader, so a local change is safe.",
];

/** Picks from a list. */
function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

function ident(r: () => number, parts = 2): string {
  return Array.from({ length: parts }, () => pick(r, WORDS)).join("_");
}

function className(r: () => number): string {
  return ident(r).split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("");
}

/** One line of Python-ish source. */
function codeLine(r: () => number): string {
  const a = ident(r), b = ident(r, 1), c = ident(r);
  switch (Math.floor(r() * 11)) {
    case 0:
      return `def ${a}(self, ${b}: ${pick(r, TYPES)}, ${c}: ${pick(r, TYPES)} = None) -> ${
        pick(r, TYPES)
      }:`;
    case 1:
      return `    ${a} = self.${b}.get(${c}, default=${JSON.stringify(ident(r, 1))})`;
    case 2:
      return `    if ${a} is None or not isinstance(${b}, ${pick(r, TYPES).split("[")[0]}):`;
    case 3:
      return `        raise ${pick(r, ERRORS)}(f"cannot ${b} {${a}!r}: missing ${c}")`;
    case 4:
      return `    return [${b} for ${b} in self.${a} if ${b}.${c}]`;
    case 5:
      return `from ${b}.${ident(r, 1)} import ${className(r)}, ${className(r)}`;
    case 6:
      return `class ${className(r)}(${className(r)}):`;
    case 7:
      return `    """${pick(r, THOUGHTS)}"""`;
    case 8:
      return `        self._${a}[${b}] = ${c}.copy()  # keep ${ident(r, 1)} stable`;
    case 9:
      return "";
    default:
      return `    for ${b}, ${c} in sorted(${a}.items(), key=lambda kv: kv[0]):`;
  }
}

function sourcePath(r: () => number): string {
  return `src/${ident(r, 1)}/${ident(r)}.py`;
}

function numberedSource(r: () => number, lines: number, from: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`${String(from + i).padStart(6)}\t${codeLine(r)}`);
  return out.join("\n");
}

function grepHits(r: () => number, lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    out.push(`${sourcePath(r)}:${1 + Math.floor(r() * 400)}:${codeLine(r).trimStart()}`);
  }
  return out.join("\n");
}

/** A pytest run with one failure and its traceback; `tag` makes the text unique. */
export function pytestOutput(r: () => number, lines: number, tag = ""): string {
  const test = `tests/test_${ident(r)}.py`;
  const out = [
    `============================= test session starts ${tag}==============================`,
    "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0",
    `collected ${10 + Math.floor(r() * 90)} items`,
    "",
    `${test} ..F.....                                                    [100%]`,
    "",
    "=================================== FAILURES ===================================",
    `_____________________________ test_${ident(r)} ______________________________`,
  ];
  for (let i = 0; i < Math.max(0, lines - 12); i++) {
    out.push(
      i % 4 === 3 ? `${sourcePath(r)}:${1 + Math.floor(r() * 400)}: in ${ident(r)}` : (
        "    " + codeLine(r).trim()
      ),
    );
  }
  out.push(`E   ${pick(r, ERRORS)}: cannot ${ident(r, 1)} '${ident(r)}': missing ${ident(r, 1)}`);
  out.push("=========================== short test summary info ============================");
  out.push(`FAILED ${test}::test_${ident(r)} - ${pick(r, ERRORS)}`);
  out.push(`1 failed, ${5 + Math.floor(r() * 60)} passed in ${(r() * 4).toFixed(2)}s`);
  return out.join("\n");
}

function gitDiff(r: () => number, lines: number): string {
  const path = sourcePath(r);
  const at = 1 + Math.floor(r() * 300);
  const out = [
    `diff --git a/${path} b/${path}`,
    `index ${Math.floor(r() * 0xfffffff).toString(16)}..${
      Math.floor(r() * 0xfffffff).toString(16)
    } 100644`,
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${at},${lines} +${at},${lines + 1} @@ class ${className(r)}:`,
  ];
  for (let i = 0; i < lines; i++) {
    const mark = r() < 0.15 ? "-" : r() < 0.2 ? "+" : " ";
    out.push(mark + codeLine(r));
  }
  return out.join("\n");
}

/**
 * The agent's loops, forever. Tool outputs have between `lines[0]` and `lines[1]` lines.
 *
 * @example
 * ```ts
 * const steps = agentSteps(7, [10, 70]);
 * const first = steps.next().value; // { reasoning, tool, args, output }
 * ```
 */
export function* agentSteps(seed: number, lines: [number, number]): Generator<AgentStep> {
  const r = rng(seed);
  const count = () => lines[0] + Math.floor(r() * (lines[1] - lines[0] + 1));
  for (let i = 0;; i++) {
    const reasoning = [pick(r, THOUGHTS), pick(r, THOUGHTS)].join(" ");
    const n = count();
    switch (i % 5) {
      case 0: {
        const offset = 1 + Math.floor(r() * 200);
        const path = sourcePath(r);
        yield {
          reasoning,
          tool: "read_file",
          args: { path, offset, limit: n },
          output: numberedSource(r, n, offset),
        };
        break;
      }
      case 1: {
        const pattern = ident(r);
        yield {
          reasoning,
          tool: "bash",
          args: { command: `grep -rn "${pattern}" src tests | head -${n}` },
          output: grepHits(r, n),
        };
        break;
      }
      case 2:
        yield {
          reasoning,
          tool: "bash",
          args: { command: `python -m pytest -q tests/test_${ident(r)}.py -x`, timeout: 600 },
          output: pytestOutput(r, n),
        };
        break;
      case 3: {
        const path = sourcePath(r);
        yield {
          reasoning,
          tool: "edit_file",
          args: { path, old_string: codeLine(r).trim(), new_string: codeLine(r).trim() },
          output: `Applied 1 edit to ${path}.\n` + numberedSource(r, Math.min(n, 12), 40),
        };
        break;
      }
      default:
        yield {
          reasoning,
          tool: "bash",
          args: { command: "git diff" },
          output: gitDiff(r, n),
        };
    }
  }
}

/** The raw Qwen3 text the policy samples for a step: reasoning, then one tool call. */
export function sampledText(step: Pick<AgentStep, "reasoning" | "tool" | "args">): string {
  return toolCallText(step.reasoning, step.tool, step.args);
}

/** A step's sampled turn as a message, for a model family to write in its own format. */
export function stepMessage(
  step: Pick<AgentStep, "reasoning" | "tool" | "args">,
): AssistantMessage {
  return toolCallMessage(step.reasoning, step.tool, step.args);
}
