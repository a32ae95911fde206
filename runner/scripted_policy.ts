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
 * Each rollout gets its own in-process loop consuming `gate.next(…, rolloutId)`. A reply is an
 * assistant message (reasoning, text, a shell call); the policy "samples" the ids the bound
 * model family's renderer writes for it (`renderAnswer`: Qwen3's `<tool_call>` JSON, Qwen3.5's
 * XML, DeepSeek's `<｜tool▁call▁begin｜>`, …), so the recorded samples hold real policy ids in
 * that family's format, with deterministic logprobs. Whether the action was taken is read from
 * the prompt the same way for every family: its sampled ids are in it (a later prompt holds
 * every earlier sampled id verbatim).
 *
 * @module
 */
import type { AssistantMessage } from "../canonical/mod.ts";
import { type Harness, shellWord } from "../harness/mod.ts";
import type { RolloutActions } from "../trajectory/mod.ts";
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

/** An assistant turn: reasoning, optional text, then one call (arguments as Python writes). */
export function toolCallMessage(
  reasoning: string,
  name: string,
  args: Record<string, unknown>,
  text = "",
): AssistantMessage {
  return {
    role: "assistant",
    content: text,
    reasoning_content: reasoning,
    tool_calls: [{ id: "", name, arguments: pythonJson(args) }],
  };
}

/** A final-answer turn. */
export function answerMessage(reasoning: string, text: string): AssistantMessage {
  return { role: "assistant", content: text, reasoning_content: reasoning };
}

/** A turn that runs `command` through `h`'s shell: a tool call, or a fenced block. */
export function shellActionMessage(
  h: Harness,
  reasoning: string,
  command: string,
): AssistantMessage {
  if (h.shell.kind === "tool") {
    return toolCallMessage(reasoning, h.shell.name, { [h.shell.argument]: command });
  }
  return answerMessage(
    reasoning,
    `THOUGHT: ${reasoning}\n\n\`\`\`${h.shell.fence}\n${command}\n\`\`\``,
  );
}

/**
 * A turn that ends the run with `text` as the agent's final answer: the answer itself, or for a
 * text shell the submit command followed by the answer (what the agent reports).
 */
export function finalAnswerMessage(h: Harness, reasoning: string, text: string): AssistantMessage {
  if (h.shell.kind === "tool") return answerMessage(reasoning, text);
  const command = `echo ${h.shell.submit} && printf '%s\\n' ${shellWord(text)}`;
  return shellActionMessage(h, reasoning, command);
}

/** A Qwen3 tool-call turn as text (`<think>`, `<tool_call>` JSON, `<|im_end|>`). */
export function toolCallText(
  reasoning: string,
  name: string,
  args: Record<string, unknown>,
  text = "",
): string {
  return qwen3SampledText(toolCallMessage(reasoning, name, args, text));
}

/** A Qwen3 final-answer turn as text. */
export function answerText(reasoning: string, text: string): string {
  return qwen3SampledText(answerMessage(reasoning, text));
}

/** The ids `model`'s family has the policy write for `message` (its end-of-turn id included). */
export async function sampledIds(model: PolicyModel, message: AssistantMessage): Promise<number[]> {
  const ids = await model.renderAnswerIds(message);
  if (ids.length === 0) {
    throw new Error(`the ${model.family} family cannot write a scripted answer`);
  }
  return ids;
}

/** Whether `ids` holds `run` as a contiguous run. */
export function containsRun(ids: readonly number[], run: readonly number[]): boolean {
  if (run.length === 0) return true;
  for (
    let i = ids.indexOf(run[0]);
    i >= 0 && i + run.length <= ids.length;
    i = ids.indexOf(run[0], i + 1)
  ) {
    let k = 1;
    while (k < run.length && ids[i + k] === run[k]) k++;
    if (k === run.length) return true;
  }
  return false;
}

/** The deterministic logprob the scripted policies assign to their i-th sampled token. */
export function scriptedLogprob(i: number): number {
  return -((i % 7) + 1) / 100;
}

/** What a scripted policy samples, given the prompt ids of one request. */
export type Script = (promptIds: readonly number[]) => Promise<number[]>;

/**
 * The script of `policy` for one rollout of `task` with harness `h`, in `model`'s format: the
 * shell action until the prompt holds it (then its output came back), then the final answer.
 */
export function scriptFor(
  policy: ScriptedPolicyName,
  h: Harness,
  task: SweTask,
  model: PolicyModel,
): Script {
  if (policy === "noop") {
    const done = finalAnswerMessage(h, "The task needs no action from me here.", FINAL_TEXT.noop);
    return () => sampledIds(model, done);
  }
  const patch = policy === "gold" ? task.gold_patch : wrongPatch(task);
  const call = shellActionMessage(
    h,
    "I will apply the fix with the shell.",
    applyPatchCommand(patch, h.shell.kind === "tool" && h.shell.refusesSubstitution === true),
  );
  const done = finalAnswerMessage(h, "The patch is applied.", FINAL_TEXT.applied);
  let callIds: Promise<number[]> | undefined;
  return async (promptIds) => {
    const action = await (callIds ??= sampledIds(model, call));
    return containsRun(promptIds, action) ? await sampledIds(model, done) : action;
  };
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

/** Starts answering `rolloutId`'s requests on `gate` (the gateway's façade) with `script`. */
export function startScriptedPolicy(o: {
  gate: Pick<RolloutActions, "next" | "ack" | "complete" | "fail">;
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
        await o.gate.ack(req.request_id);
        const ids = await o.script(Array.from(req.prompt_ids));
        await o.gate.complete(req.request_id, {
          output_ids: ids,
          logprobs: ids.map((_, i) => scriptedLogprob(i)),
          finish_reason: "stop",
        });
        answered++;
      } catch (err) {
        error ??= (err as Error).message;
        await o.gate.fail(req.request_id, `scripted policy failed: ${(err as Error).message}`)
          .catch(() => {/* already resolved (rollout finished) */});
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
