/**
 * SCRIPTED SELF-TEST POLICIES, not a model: they stand in for the trainer so the whole rollout
 * loop (agent CLI in a sandbox → gateway → diff → grading) can be checked without one.
 *
 * - `gold`: turn 1 runs, through the agent's own shell (its shell tool, or a fenced block for an
 *   agent without tools), a command that writes the task's gold patch to a temporary file (quoted
 *   heredoc) and runs `git apply`; once its output is in the prompt, a final answer. Expected
 *   reward: 1.
 * - `noop`: a final answer at once, nothing changed. Expected reward: 0.
 * - `wrong` (hidden): like `gold` with a deliberately broken patch. Expected reward: 0.
 *
 * An agent without tools has no "final answer" of its own: it ends when a command's output starts
 * with its submit line, so there the final answer is that command, echoing the answer after it.
 *
 * Each rollout gets its own in-process loop consuming `gate.next(…, rolloutId)`; replies are
 * written as Qwen3 text (the default policy model's format: `<think>`, `<tool_call>` JSON,
 * `<|im_end|>`) and tokenized with the gateway's own tokenizer, so the recorded samples hold real
 * policy ids with deterministic logprobs.
 *
 * @module
 */
import { type Harness, shellWord } from "../harness/mod.ts";
import type { InterceptionGate } from "../generation/mod.ts";
import { type PolicyModel, pythonJson, qwen3SampledText } from "../model/mod.ts";
import type { SweTask } from "../sandbox/mod.ts";
import { applyPatchCommand, wrongPatch } from "./patch_commands.ts";

/** The scripted policies. */
export type ScriptedPolicyName = "gold" | "noop" | "wrong";

/** Final answers of the scripted policies. */
export const FINAL_TEXT = {
  applied: "I applied the fix with git apply; the change is in the working tree.",
  noop: "I reviewed the issue and left the repository unchanged.",
} as const;

/** A Qwen3 tool-call turn: reasoning, optional text, then one call (arguments as Qwen3 writes). */
export function toolCallText(
  reasoning: string,
  name: string,
  args: Record<string, unknown>,
  text = "",
): string {
  return qwen3SampledText({
    role: "assistant",
    content: text,
    reasoning_content: reasoning,
    tool_calls: [{ id: "", name, arguments: pythonJson(args) }],
  });
}

/** A Qwen3 final-answer turn. */
export function answerText(reasoning: string, text: string): string {
  return qwen3SampledText({ role: "assistant", content: text, reasoning_content: reasoning });
}

/** A Qwen3 turn that runs `command` through `h`'s shell: a tool call, or a fenced block. */
export function shellActionText(h: Harness, reasoning: string, command: string): string {
  if (h.shell.kind === "tool") {
    return toolCallText(reasoning, h.shell.name, { [h.shell.argument]: command });
  }
  return answerText(
    reasoning,
    `THOUGHT: ${reasoning}\n\n\`\`\`${h.shell.fence}\n${command}\n\`\`\``,
  );
}

/**
 * A Qwen3 turn that ends the run with `text` as the agent's final answer: the answer itself, or
 * for a text shell the submit command followed by the answer (what the agent reports).
 */
export function finalAnswerText(h: Harness, reasoning: string, text: string): string {
  if (h.shell.kind === "tool") return answerText(reasoning, text);
  const command = `echo ${h.shell.submit} && printf '%s\\n' ${shellWord(text)}`;
  return shellActionText(h, reasoning, command);
}

/**
 * Whether the decoded prompt already holds the result of a shell command the policy ran: a
 * `<tool_response>`, or for a text shell any earlier assistant turn (its command's output follows
 * it as a user message).
 */
export function hasActed(h: Harness, promptText: string): boolean {
  if (h.shell.kind === "tool") return promptText.includes("</tool_response>");
  return promptText.split("<|im_start|>assistant\n").length > 2;
}

/** The deterministic logprob the scripted policies assign to their i-th sampled token. */
export function scriptedLogprob(i: number): number {
  return -((i % 7) + 1) / 100;
}

/** What a scripted policy says, given the decoded prompt of one request. */
export type Script = (promptText: string) => string;

/** The script of `policy` for one rollout of `task` with harness `h`. */
export function scriptFor(policy: ScriptedPolicyName, h: Harness, task: SweTask): Script {
  if (policy === "noop") {
    return () => finalAnswerText(h, "The task needs no action from me here.", FINAL_TEXT.noop);
  }
  const patch = policy === "gold" ? task.gold_patch : wrongPatch(task);
  const call = shellActionText(h, "I will apply the fix with the shell.", applyPatchCommand(patch));
  const done = finalAnswerText(h, "The patch is applied.", FINAL_TEXT.applied);
  return (text) => hasActed(h, text) ? done : call;
}

/** A running scripted policy for one rollout. */
export interface ScriptedPolicyRun {
  /** Requests answered so far. */
  readonly answered: number;
  /** The first error the loop hit (the request got a gateway error), if any. */
  readonly error: string | undefined;
  /** Stops the loop; resolves once it has ended. */
  stop(): Promise<void>;
}

/** Starts answering `rolloutId`'s requests on `gate` with `script`. */
export function startScriptedPolicy(o: {
  gate: InterceptionGate;
  model: PolicyModel;
  rolloutId: string;
  script: Script;
}): ScriptedPolicyRun {
  const abort = new AbortController();
  let answered = 0;
  let error: string | undefined;
  const loop = (async () => {
    while (!abort.signal.aborted) {
      const req = await o.gate.next(1_000, o.rolloutId, abort.signal);
      if (!req) continue;
      try {
        const reply = o.script(await o.model.decode(req.prompt_ids));
        const ids = await o.model.tokenizer.encode(reply);
        o.gate.complete(req.request_id, {
          output_ids: ids,
          logprobs: ids.map((_, i) => scriptedLogprob(i)),
          finish_reason: "stop",
        });
        answered++;
      } catch (err) {
        error ??= (err as Error).message;
        try {
          o.gate.fail(req.request_id, `scripted policy failed: ${(err as Error).message}`);
        } catch { /* already resolved (rollout finished) */ }
      }
    }
  })();
  return {
    get answered() {
      return answered;
    },
    get error() {
      return error;
    },
    async stop() {
      abort.abort();
      await loop;
    },
  };
}
