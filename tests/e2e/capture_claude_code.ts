/**
 * Records what the real Claude Code CLI sends for one scripted session, for fixtures: an
 * in-process gateway with the scripted policy (TEST DOUBLE at the model boundary), a recording
 * proxy in front of it, and Claude Code run against the proxy. Prints one JSON line per request
 * (`seq`, `method`, `path`, `headers` with secrets redacted, `body`; the scratch directory's
 * path replaced by `<tmp>`, Claude Code's project slug of it by `<tmp-slug>`).
 *
 *     deno run -A tests/e2e/capture_claude_code.ts unicode-escape > fixture.jsonl
 *
 * Scenarios:
 * - `unicode-escape`: the policy lists the directory with Bash, then calls Bash with `\u00e9`
 *   escape text (six characters) in the command string, then answers. Claude Code 2.1.330 sends
 *   the second tool input back decoded (`é`): the third request departs from the recorded chain
 *   after the first turn.
 * - `read-image`: the policy reads a PNG of the workdir (`rgb-333x127.png` of the image fixtures)
 *   with `Read`; Claude Code sends it back as an `image` block in the tool result. The policy is
 *   text-only, so that request gets the gateway's 400, and the run ends there.
 *
 * @module
 */
import { claudeCode, runLocal } from "../../harness/mod.ts";
import { startGateway } from "../trajectory/agent_clients.ts";
import { answerText, toolCallText } from "../support/scripted_policy.ts";
import { fixtureImage } from "../support/image_files.ts";
import { makeWorkdir, MODEL_ID, RUN_BUDGET_MS } from "./cli_scenario.ts";

/** A Bash command whose string holds the six characters `\u00e9`. */
export const ESCAPE_COMMAND = "echo 'caf\\u00e9' > cafe.txt";
export const ESCAPE_PROMPT = "Write the word cafe with an escaped e-acute into cafe.txt.";
export const ESCAPE_FINAL = "Wrote cafe.txt.";

/** The policy of the `unicode-escape` scenario, by the number of tool results in the prompt. */
export function escapeScript({ text }: { text: string }): string {
  const results = text.split("</tool_response>").length - 1;
  if (results === 0) return toolCallText("Look first.", "Bash", { command: "ls" });
  if (results === 1) return toolCallText("I will write it.", "Bash", { command: ESCAPE_COMMAND });
  return answerText("It ran.", ESCAPE_FINAL);
}

const SECRET = /^(authorization|x-api-key)$/;

export interface CapturedRequest {
  seq: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A proxy that records every request and forwards it to `target`. */
export function recordingProxy(target: string, out: CapturedRequest[]) {
  return Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = await req.text();
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => {
      headers[k] = SECRET.test(k) ? `<redacted len=${v.length}>` : v;
    });
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch { /* not JSON */ }
    out.push({
      seq: out.length + 1,
      method: req.method,
      path: url.pathname + url.search,
      headers,
      body,
    });
    const forward = new Headers(req.headers);
    forward.delete("host");
    forward.delete("content-length");
    return await fetch(target + url.pathname + url.search, {
      method: req.method,
      headers: forward,
      body: req.method === "GET" ? undefined : text,
    });
  });
}

/** Runs the scenario; returns the captured requests and the rollout's tree. */
export async function captureUnicodeEscape(): Promise<{
  requests: CapturedRequest[];
  tree: unknown;
}> {
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-capture-" });
  const t = await startGateway();
  const requests: CapturedRequest[] = [];
  const proxy = recordingProxy(t.url, requests);
  t.replies.push(
    ...["", "</tool_response>", "</tool_response></tool_response>"].map((text) =>
      escapeScript({ text })
    ),
  );
  try {
    await makeWorkdir(`${tmp}/work`);
    const r = await t.rollout({ id: "capture" });
    const run = await runLocal(claudeCode, ESCAPE_PROMPT, {
      gatewayUrl: `http://127.0.0.1:${proxy.addr.port}`,
      rolloutId: r.id,
      token: r.token,
      model: MODEL_ID,
      workdir: `${tmp}/work`,
      home: `${tmp}/home`,
    }, { timeoutMs: RUN_BUDGET_MS });
    if (!run.completion.ok) {
      throw new Error(`claude failed: ${run.completion.error}\n${run.stderr}`);
    }
    // The scratch directory's path is no part of the fixture.
    const scrubbed = JSON.parse(
      JSON.stringify(requests).replaceAll(tmp, "<tmp>")
        .replaceAll(tmp.replace(/[^A-Za-z0-9]/g, "-"), "<tmp-slug>"),
    );
    return { requests: scrubbed, tree: await t.tree(r.id) };
  } finally {
    await proxy.shutdown();
    await t.close();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** Runs the `read-image` scenario; returns the captured requests (the run ends on the 400). */
export async function captureReadImage(): Promise<CapturedRequest[]> {
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-capture-" });
  const t = await startGateway();
  const requests: CapturedRequest[] = [];
  const proxy = recordingProxy(t.url, requests);
  const image = await fixtureImage();
  t.replies.push(toolCallText("Look at it.", "Read", { file_path: `${tmp}/work/shot.png` }));
  try {
    await makeWorkdir(`${tmp}/work`);
    await Deno.writeFile(`${tmp}/work/shot.png`, image.bytes);
    const r = await t.rollout({ id: "capture" });
    await runLocal(claudeCode, "Look at shot.png.", {
      gatewayUrl: `http://127.0.0.1:${proxy.addr.port}`,
      rolloutId: r.id,
      token: r.token,
      model: MODEL_ID,
      workdir: `${tmp}/work`,
      home: `${tmp}/home`,
    }, { timeoutMs: RUN_BUDGET_MS });
    return JSON.parse(
      JSON.stringify(requests).replaceAll(tmp, "<tmp>")
        .replaceAll(tmp.replace(/[^A-Za-z0-9]/g, "-"), "<tmp-slug>"),
    );
  } finally {
    await proxy.shutdown();
    await t.close();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const requests = Deno.args[0] === "read-image"
    ? await captureReadImage()
    : (await captureUnicodeEscape()).requests;
  for (const r of requests) console.log(JSON.stringify(r));
}
