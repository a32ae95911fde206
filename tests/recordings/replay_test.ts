/**
 * Replays every recorded session of OpenCode, Qwen Code, mini-swe-agent and the Gemini CLI
 * (`record.ts`) through
 * the gate: each recorded request is sent, with its recorded headers, to an in-process gateway in
 * the order it arrived, and the scripted policy (TEST DOUBLE) samples, as Qwen3 text, the reply
 * the recording server gave. The ids in later requests (tool-call ids, thinking signatures) are
 * the recording server's; they are swapped for the gateway's as the gateway hands them out, and
 * nothing else in a body is changed, so the CLIs' own echo habits (re-serialised arguments, added
 * fields, moved `cache_control`) reach the gateway as recorded.
 *
 * What must hold: no duplicate turn (a CLI's re-send of a failed or rejected request is answered
 * from its turn, and never reaches the policy twice), no false branch (every turn of a chain
 * extends its parent; chains are exactly the session's main line, plus the side request where
 * OpenCode asks for a title), and the main sample trains exactly the sampled ids.
 */
import assert from "node:assert/strict";
import { answerText, toolCallText } from "../support/scripted_policy.ts";
import {
  accumulateChat,
  type Json,
  parseSse,
  readAnthropicStream,
  startGateway,
  sum,
  type TestGateway,
} from "../trajectory/agent_clients.ts";
import { GoldenDigests, withoutIssue24Fields } from "../support/golden.ts";

const ROOT = new URL("../../", import.meta.url);
/** The sessions hand out what they did before issue 11's memory work (`golden.ts`). */
const golden = new GoldenDigests(new URL("./golden.replay.json", import.meta.url));
const CLIS = /^(opencode|qwen-code|mini-swe-agent|gemini-cli)-[0-9.]+\.([a-z-]+)\.jsonl$/;

interface Recording {
  file: string;
  session: string;
  protocol: "chat" | "anthropic" | "gemini";
  records: Json[];
}

function recordings(): Recording[] {
  const out: Recording[] = [];
  const dirs = [["openai_chat", "chat"], ["anthropic", "anthropic"], ["gemini", "gemini"]] as const;
  for (const [dir, protocol] of dirs) {
    const url = new URL(`gateway/agent/${dir}/__fixtures__/`, ROOT);
    for (const e of Deno.readDirSync(url)) {
      const m = CLIS.exec(e.name);
      if (!m) continue;
      const text = Deno.readTextFileSync(new URL(e.name, url));
      const records = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
      out.push({ file: e.name, session: m[2], protocol, records });
    }
  }
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

/** The Qwen3 text that makes the gateway answer what the recording server answered. */
function policyText(reply: Json, protocol: Recording["protocol"]): string {
  if (protocol === "gemini") {
    const parts: Json[] = reply.parts;
    const reasoning = parts.filter((p) => p.thought).map((p) => p.text).join("");
    const text = parts.filter((p) => p.text !== undefined && !p.thought).map((p) => p.text)
      .join("");
    const call = parts.find((p) => p.functionCall)?.functionCall;
    return call ? toolCallText(reasoning, call.name, call.args, text) : answerText(reasoning, text);
  }
  if (protocol === "anthropic") {
    const blocks: Json[] = reply.blocks;
    const reasoning = blocks.find((b) => b.type === "thinking")?.thinking ?? "";
    const text = blocks.find((b) => b.type === "text")?.text ?? "";
    const call = blocks.find((b) => b.type === "tool_use");
    return call
      ? toolCallText(reasoning, call.name, call.input, text)
      : answerText(reasoning, text);
  }
  const call = reply.tool_calls?.[0]?.function;
  return call
    ? toolCallText(reply.reasoning_content, call.name, JSON.parse(call.arguments), reply.content)
    : answerText(reply.reasoning_content, reply.content);
}

/**
 * The ids of a reply the client echoes later: tool-call ids and thinking signatures (Gemini: the
 * calls' ids, then the one signature, on whichever part carries it).
 */
function echoedIds(reply: Json, protocol: Recording["protocol"]): string[] {
  if (protocol === "gemini") {
    const parts: Json[] = reply.parts;
    return [
      ...parts.flatMap((p) => p.functionCall ? [p.functionCall.id] : []),
      ...parts.filter((p) => p.thoughtSignature).slice(0, 1).map((p) => p.thoughtSignature),
    ];
  }
  if (protocol === "anthropic") {
    return reply.blocks.flatMap((b: Json) =>
      b.type === "tool_use" ? [b.id] : b.type === "thinking" ? [b.signature] : []
    );
  }
  return (reply.tool_calls ?? []).map((c: Json) => c.id);
}

const DROPPED_HEADERS = new Set([
  "host",
  "content-length",
  "connection",
  "accept-encoding",
  "authorization",
  "x-api-key",
  "x-goog-api-key",
]);

/** Sends one recorded request's body with its recorded headers; the answer's echoed ids. */
async function send(
  t: TestGateway,
  rollout: { id: string; token: string },
  rec: Json,
  body: Json,
  protocol: Recording["protocol"],
): Promise<string[]> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(rec.headers as Record<string, string>)) {
    if (!DROPPED_HEADERS.has(k)) headers[k] = v;
  }
  headers.authorization = `Bearer ${rollout.token}`;
  const query = new URLSearchParams(rec.query ?? {}).toString();
  const res = await fetch(`${t.url}/rollout/${rollout.id}${rec.path}${query ? `?${query}` : ""}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `request ${rec.seq}: ${text.slice(0, 500)}`);
  if (protocol === "gemini") {
    const chunks = rec.path.endsWith(":streamGenerateContent")
      ? parseSse(text).map((e) => e.data)
      : [JSON.parse(text)];
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    return echoedIds({ parts }, protocol);
  }
  if (protocol === "anthropic") {
    const answer = body.stream ? readAnthropicStream(text) : JSON.parse(text);
    return echoedIds({ blocks: answer.content }, protocol);
  }
  const chunks = parseSse(text).map((e) => e.data).filter((d) => typeof d === "object");
  const answer = body.stream ? accumulateChat(chunks) : JSON.parse(text).choices[0].message;
  return echoedIds(answer, protocol);
}

for (const recording of recordings()) {
  Deno.test(`replay ${recording.file}: no duplicate turn, no false branch`, async () => {
    const t = await startGateway();
    try {
      const rollout = await t.rollout({ labels: { drift: "train" } });
      const posts = recording.records.filter((r) => r.method === "POST");
      // The reply a body finally got (a re-sent body is answered by the gateway, not the policy).
      const replyOf = new Map<string, Json>();
      for (const r of posts) replyOf.set(JSON.stringify(r.body), r.reply);
      const queued = new Set<string>();
      const ids = new Map<string, string>();
      for (const rec of posts) {
        const raw = JSON.stringify(rec.body);
        if (!queued.has(raw)) {
          queued.add(raw);
          t.replies.push(policyText(replyOf.get(raw), recording.protocol));
        }
        let text = raw;
        for (const [recorded, gateway] of ids) text = text.replaceAll(recorded, gateway);
        const got = await send(t, rollout, rec, JSON.parse(text), recording.protocol);
        const recorded = rec.reply.plan === "fault" ? [] : echoedIds(rec.reply, recording.protocol);
        recorded.forEach((id, i) => ids.set(id, got[i]));
      }

      const tree = await t.tree(rollout.id);
      assert.equal(t.replies.unexpected, 0, "no request reached the policy unplanned");
      assert.equal(t.replies.queue.length, 0, "every distinct request reached the policy");
      assert.equal(tree.turns.length, queued.size, "one turn per distinct request");
      assert.equal(
        tree.turns.reduce((n, turn) => n + turn.retries, 0),
        posts.length - queued.size,
        "every re-send is answered from its turn",
      );
      for (const turn of tree.turns) {
        assert.equal(turn.status, "done", turn.id);
        const root = tree.chains[turn.chain].root === turn.id;
        assert.equal(turn.mount, root ? (turn.index === 0 ? "root" : "rewritten") : "extend");
      }
      const labels = recording.session === "title" ? ["side", "main"] : ["main"];
      assert.deepEqual(tree.chains.map((c) => c.label), labels, "the session's chains");

      const samples = await t.finish(rollout.id);
      const main = samples.filter((s) => s.branch === "main");
      assert.equal(main.length, 1);
      const mainTurns = tree.turns.filter((x) => tree.chains[x.chain].label === "main");
      assert.deepEqual(main[0].turns, mainTurns.map((x) => x.id), "one linear main chain");
      const sampled = mainTurns.reduce((n, x) => n + x.output_ids.length, 0);
      assert.equal(sum(main[0].loss_mask), sampled, "the main sample trains the sampled ids");
      golden.check(recording.file, withoutIssue24Fields({ samples, tree }));
    } finally {
      await t.close();
    }
  });
}
