/**
 * Load driver: what a teacher (on-policy distillation, issue 34) costs per turn, and that a
 * gateway whose rollouts name none costs what it did before. Three modes, alternately, `--rounds`
 * times each, on the same load (coding-agent tool loops over OpenAI Chat, `--rollouts` rollouts
 * of `--turns` turns, 4 agents at once, 2 trainer workers answering through `/api` with the
 * scripted policy's real Qwen3 ids):
 *
 * 1. `baseline`: `main.ts serve` of another checkout (`--baseline REF`, default `main`, taken
 *    with `git archive` into a temporary directory), the code before teachers;
 * 2. `no teacher`: this checkout, no teacher flag;
 * 3. `teacher`: this checkout with `--teacher-url` pointing at a REAL vLLM (the CPU build in
 *    `.venv-engine`, `tinyQwen3(1)`), every rollout scored by it; the round waits until every turn
 *    is scored before it reads the counters.
 *
 * Per round: the gateway's CPU per turn (`/proc/<pid>/stat`), its RSS growth per turn (RSS with
 * every rollout held, minus RSS when ready), the teacher's CPU per turn (the vLLM process and its
 * children; in the other modes the same counter is the idle floor) and the journal's bytes (its
 * rows' `data` and `arrays`): `teacher_scored` events per scored position, and the sample log once
 * every rollout finished, per sample position beside `no teacher`'s. One vLLM server, started once
 * for the whole run; `--no-vllm` measures modes 1 and 2 only. Once teachers are in `main`, name
 * the commit before them as `--baseline`.
 *
 *     deno run -A bench/teacher_bench.ts [--rollouts 8] [--turns 10] [--rounds 2] [--baseline main]
 *
 * @module
 */
import { agentSteps, sampledText, SYSTEM_PROMPT, TASK } from "./agent_history.ts";
import { chatBody, chatCall, type WireMessage } from "./chat_agent.ts";
import { type GatewayProcess, procCpuSeconds, startGatewayProcess } from "./gateway_process.ts";
import { startTrainerLoops } from "./scripted_trainer.ts";
import { DatabaseSync } from "node:sqlite";
import { PolicyModel } from "../model/mod.ts";
import { startVllm, tinyQwen3, type VllmServer } from "../tests/support/vllm_server.ts";

function flag(name: string, fallback: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : fallback;
}
const ROLLOUTS = Number(flag("rollouts", "8"));
const TURNS = Number(flag("turns", "10"));
const ROUNDS = Number(flag("rounds", "2"));
const BASELINE = flag("baseline", "main");
const WITH_VLLM = !Deno.args.includes("--no-vllm");
const AGENTS = 4;
const JSON_HEADERS = { "content-type": "application/json" };
const CHECKOUT = new URL("..", import.meta.url).pathname;

type Mode = "baseline" | "no teacher" | "teacher";

/** `git archive REF` of this repository into a temporary directory sharing this one's installs. */
async function snapshot(ref: string): Promise<{ dir: string; commit: string }> {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-baseline-" });
  const git = (args: string[]) =>
    new Deno.Command("git", { args, cwd: CHECKOUT, stdout: "piped" }).output();
  const commit = new TextDecoder().decode((await git(["rev-parse", ref])).stdout).trim();
  const tar = new Deno.Command("sh", {
    args: ["-c", `git archive ${commit} | tar -x -C ${dir}`],
    cwd: CHECKOUT,
  });
  if (!(await tar.output()).success) throw new Error(`git archive ${ref} failed`);
  await Deno.symlink(Deno.realPathSync(`${CHECKOUT}node_modules`), `${dir}/node_modules`);
  return { dir, commit };
}

/** CPU seconds of a process and every descendant alive now (vLLM's engine core is a child). */
function treeCpuSeconds(root: number): number {
  const children = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...children.get(ppid) ?? [], Number(entry.name)]);
    } catch { /* ended meanwhile */ }
  }
  let total = 0;
  const walk = (pid: number) => {
    try {
      total += procCpuSeconds(pid);
    } catch { /* ended meanwhile */ }
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(root);
  return total;
}

/**
 * Bytes the journal holds (`data` JSON plus binary `arrays`) in `table`, of events of `kind`.
 * Row bytes, not file sizes: SQLite's pages and WAL make a file's size move in steps that hide a
 * few hundred KiB. The gateway holds its journal locked, so this reads a copy of its files (the
 * WAL replayed on open), taken while the gateway is idle.
 */
function journalBytes(dataDir: string, table: "events" | "samples", kind?: string): number {
  const copy = Deno.makeTempDirSync({ prefix: "rollgate-journal-copy-" });
  for (const suffix of ["", "-wal"]) {
    try {
      Deno.copyFileSync(`${dataDir}/journal.sqlite${suffix}`, `${copy}/journal.sqlite${suffix}`);
    } catch { /* no WAL */ }
  }
  const db = new DatabaseSync(`${copy}/journal.sqlite`);
  try {
    const where = kind ? " WHERE kind = ?" : "";
    const row = db.prepare(
      `SELECT coalesce(sum(length(data) + coalesce(length(arrays), 0)), 0) AS n FROM ${table}${where}`,
    ).get(...(kind ? [kind] : [])) as { n: number };
    return Number(row.n);
  } finally {
    db.close();
    Deno.removeSync(copy, { recursive: true });
  }
}

// deno-lint-ignore no-explicit-any
async function api(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${gw.url}/api${path}`, {
    method,
    headers: JSON_HEADERS,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(600_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const model = await PolicyModel.load();
const replyIds = await model.tokenizer.encode(sampledText({
  reasoning: "Run the focused test again to see whether the fix holds.",
  tool: "bash",
  args: { command: "python -m pytest -q tests/test_config_loader.py", timeout: 600 },
}));

interface RoundResult {
  gatewayCpuMs: number;
  rssKb: number;
  teacherCpuMs: number;
  /** The journal's `teacher_scored` events. */
  scoredBytes: number;
  /** The sample log, once every rollout finished. */
  sampleBytes: number;
  scored: number;
  positions: number;
}

async function round(mode: Mode, baseline: string, teacher?: VllmServer): Promise<RoundResult> {
  const gw = await startGatewayProcess({
    checkout: mode === "baseline" ? baseline : undefined,
    serveFlags: mode === "teacher"
      ? ["--teacher-url", teacher!.url, "--teacher-model", teacher!.servedName]
      : [],
  });
  const trainer = startTrainerLoops(gw.url, 2, () => ({ output_ids: replyIds }));
  try {
    const rssBefore = gw.rss();
    const cpuBefore = gw.cpuSeconds();
    const teacherBefore = teacher ? treeCpuSeconds(teacher.pid) : 0;
    const ids: string[] = [];
    const agent = async (n: number) => {
      const { id, token } = await api(gw, "POST", "/rollouts", { id: `t-${mode[0]}-${n}` });
      ids.push(id);
      const steps = agentSteps(100 + n, [4, 40]);
      const messages: WireMessage[] = [{ ...SYSTEM_PROMPT }, { ...TASK }];
      for (let k = 0; k < TURNS; k++) {
        const { message } = await chatCall(gw.url, id, token, chatBody(messages, false), false);
        messages.push(message);
        const calls = message.tool_calls as { id: string }[];
        messages.push({
          role: "tool",
          tool_call_id: calls[0].id,
          content: steps.next().value!.output,
        });
      }
    };
    let next = 0;
    await Promise.all(Array.from({ length: AGENTS }, async () => {
      while (next < ROLLOUTS) await agent(next++);
    }));
    if (mode === "teacher") {
      // Scoring runs off the turns' path: the round's cost includes it, so wait until it is done.
      for (const id of ids) {
        for (;;) {
          const r = await api(gw, "GET", `/rollouts/${id}`);
          // deno-lint-ignore no-explicit-any
          if (!r.turn_list.some((t: any) => t.teacher_score === "pending")) break;
          await new Promise((res) => setTimeout(res, 200));
        }
      }
    }
    const turns = ROLLOUTS * TURNS;
    const result: RoundResult = {
      gatewayCpuMs: (gw.cpuSeconds() - cpuBefore) * 1000 / turns,
      rssKb: (gw.rss() - rssBefore) / 1024 / turns,
      teacherCpuMs: teacher ? (treeCpuSeconds(teacher.pid) - teacherBefore) * 1000 / turns : NaN,
      scoredBytes: journalBytes(gw.dataDir!, "events", "teacher_scored"),
      sampleBytes: 0,
      scored: 0,
      positions: 0,
    };
    for (const id of ids) {
      const { samples } = await api(gw, "POST", `/rollouts/${id}/finish`, { reward: 1 });
      for (const s of samples) {
        result.positions += s.input_ids.length;
        result.scored += (s.teacher_logprobs ?? []).filter((x: number | null) => x !== null).length;
      }
    }
    result.sampleBytes = journalBytes(gw.dataDir!, "samples");
    return result;
  } finally {
    await trainer.stop();
    await gw.stop();
  }
}

const load = () => Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
console.log(`load at start: ${load()} (${navigator.hardwareConcurrency} cores)`);
const base = await snapshot(BASELINE);
console.log(
  `baseline: ${BASELINE} = ${base.commit}; ${ROLLOUTS} rollouts × ${TURNS} turns a round`,
);
const teacher = WITH_VLLM
  ? await startVllm({ model: await tinyQwen3(1), servedName: "teacher", maxModelLen: 16384 })
  : undefined;
try {
  const modes: Mode[] = WITH_VLLM
    ? ["baseline", "no teacher", "teacher"]
    : ["baseline", "no teacher"];
  const results = new Map<Mode, RoundResult[]>(modes.map((m) => [m, []]));
  for (let r = 1; r <= ROUNDS; r++) {
    for (const mode of modes) {
      const m = await round(mode, base.dir, teacher);
      results.get(mode)!.push(m);
      console.log(`round ${r} ${mode}: ${JSON.stringify(m)} (load ${load()})`);
    }
  }
  const plain = results.get("no teacher")!;
  console.log(
    "\n| mode | round | gateway CPU / turn | gateway RSS / turn | teacher CPU / turn | " +
      "positions scored | `teacher_scored` / scored position | sample log / sample position |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const [mode, rs] of results) {
    rs.forEach((m, i) => {
      const sampleExtra = (m.sampleBytes - plain[i].sampleBytes) / m.positions;
      console.log(
        `| ${mode} | ${i + 1} | ${m.gatewayCpuMs.toFixed(2)} ms | ${m.rssKb.toFixed(0)} KiB | ${
          Number.isNaN(m.teacherCpuMs) ? "–" : `${m.teacherCpuMs.toFixed(1)} ms`
        } | ${m.scored} of ${m.positions} | ${
          m.scored ? `${(m.scoredBytes / m.scored).toFixed(1)} B` : "–"
        } | ${mode === "no teacher" ? "(the reference)" : `${sampleExtra.toFixed(1)} B more`} |`,
      );
    });
  }
  console.log(`load at end: ${load()}`);
} finally {
  await teacher?.stop();
  await Deno.remove(base.dir, { recursive: true });
}
