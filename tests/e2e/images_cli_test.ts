/**
 * Images with the real Claude Code CLI: the policy (TEST DOUBLE at the model boundary) reads a
 * PNG of the workdir with Claude Code's `Read` tool, and Claude Code sends the file back as an
 * `image` block (base64 source) in the tool result. A recording proxy in front of a real
 * `main.ts serve` keeps what it sent.
 *
 * - A text-only policy (Qwen3): the gateway answers the image turn with a 400 in Anthropic's
 *   shape saying why; Claude Code shows that message and ends (no retry loop, no hang), the
 *   gateway lives and the first turn stays recorded.
 * - A Qwen3-VL policy: the same run completes; the second prompt holds the image's pads (as many
 *   as the processor's rule gives for the size Claude Code sent), the sample names the image by
 *   the sha256 of the bytes Claude Code sent, and `GET /api/images/:hash` gives those bytes back.
 * - Codex's `view_image` sends the file back as an `input_image` part (a `data:` URL) of the
 *   `function_call_output`; a text-only policy's 400 is the error Codex reports (no retry).
 * - The Gemini CLI's `read_file` answers with a `functionResponse` ("Binary content provided") and
 *   the file as an `inlineData` part beside it; the 400 is the API error it reports.
 *
 * (pi 0.73.1 leaves images out of the request itself unless its `models.json` declares image
 * input, which the harness does not: a text-only policy never sees one.)
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  claudeCode,
  codex,
  describeRun,
  geminiCli,
  type Harness,
  runLocal,
  tail,
} from "../../harness/mod.ts";
import { readImageHeader } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { type CapturedRequest, recordingProxy } from "./capture_claude_code.ts";
import { api, makeWorkdir, MODEL_ID, RUN_BUDGET_MS } from "./cli_scenario.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { ScriptedPolicy } from "../support/scripted_policy.ts";
import { fixtureImage } from "../support/image_files.ts";
import { qwen3VlModelDir } from "../support/vision_models.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";

const MISSING = cliMissing(claudeCode);
const CODEX_MISSING = cliMissing(codex);
const GEMINI_MISSING = cliMissing(geminiCli);
const PNG = await fixtureImage("screen-1920x1080.png");
const PROMPT = "Look at shot.png and tell me what it shows.";
const FINAL = "It shows a yellow square and a red disc.";

/** The image blocks of a captured Messages request's tool results. */
function toolResultImages(request: CapturedRequest): { media_type: string; data: string }[] {
  const body = request.body as { messages: { content: unknown }[] };
  const out: { media_type: string; data: string }[] = [];
  for (const m of body.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content as { type: string; content?: unknown }[]) {
      if (block.type !== "tool_result" || !Array.isArray(block.content)) continue;
      for (const part of block.content as { type: string; source?: { data: string } }[]) {
        if (part.type === "image") out.push(part.source as { media_type: string; data: string });
      }
    }
  }
  return out;
}

interface Run {
  gw: GatewayProcess;
  rollout: { id: string; token: string };
  requests: CapturedRequest[];
  policy: ScriptedPolicy;
  run: Awaited<ReturnType<typeof runLocal>>;
}

/** How a CLI reads an image file: its harness, its tool and the tool's arguments. */
interface ImageReader {
  harness: Harness;
  tool: string;
  args(path: string): Record<string, string>;
}

const CLAUDE_READ: ImageReader = {
  harness: claudeCode,
  tool: "Read",
  args: (path) => ({ file_path: path }),
};

/** A CLI against `gw` through a recording proxy: read shot.png, then answer. */
async function readTheImage(
  gw: GatewayProcess,
  model: PolicyModel,
  check: (r: Run) => Promise<void>,
  reader: ImageReader = CLAUDE_READ,
) {
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-e2e-images-" });
  const requests: CapturedRequest[] = [];
  const proxy = recordingProxy(gw.url, requests);
  let policy: ScriptedPolicy | undefined;
  let run: Run["run"] | undefined;
  try {
    await makeWorkdir(`${tmp}/work`);
    await Deno.writeFile(`${tmp}/work/shot.png`, PNG.bytes);
    const rollout = await api(gw, "/api/rollouts", { metadata: { harness: reader.harness.name } });
    policy = new ScriptedPolicy(
      gw.url,
      ({ text }) =>
        text.includes("</tool_response>") ? { role: "assistant", content: FINAL } : {
          role: "assistant",
          content: "",
          tool_calls: [{
            id: "",
            name: reader.tool,
            arguments: JSON.stringify(reader.args(`${tmp}/work/shot.png`)),
          }],
        },
      { rollout: rollout.id, model },
    ).start();
    run = await runLocal(reader.harness, PROMPT, {
      gatewayUrl: `http://127.0.0.1:${proxy.addr.port}`,
      rolloutId: rollout.id,
      token: rollout.token,
      model: MODEL_ID,
      workdir: `${tmp}/work`,
      home: `${tmp}/home`,
    }, { timeoutMs: RUN_BUDGET_MS });
    await check({ gw, rollout, requests, policy, run });
  } catch (e) {
    console.error(
      [run ? describeRun(run) : "(the CLI did not run)", `--- gateway ---\n${tail(gw.output())}`]
        .join("\n"),
    );
    throw e;
  } finally {
    await policy?.stop();
    await proxy.shutdown();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The Messages requests of the turns (not count_tokens, not the title request). */
const turnRequests = (requests: CapturedRequest[]) =>
  requests.filter((r) =>
    new URL(r.path, "http://x").pathname.endsWith("/v1/messages") &&
    ((r.body as { tools?: unknown[] }).tools?.length ?? 0) > 0
  );

Deno.test({
  name: "e2e claude-code images: a text-only policy's 400 is what Claude Code shows" +
    (MISSING ? ` [skipped: ${MISSING}]` : ""),
  ignore: skipGroup("e2e claude-code", MISSING),
  async fn() {
    const gw = await startGateway();
    try {
      await readTheImage(gw, await PolicyModel.load(), async ({ rollout, requests, run }) => {
        const turns = turnRequests(requests);
        const images = toolResultImages(turns[turns.length - 1]);
        assert.equal(images.length, 1, "Claude Code sends the file as an image block");
        assert.equal(images[0].media_type, "image/png");
        assert.ok(!run.timedOut, "Claude Code ends by itself");
        // It retries a 400 a bounded number of times (2.1.330: 3, then 3 with every tool
        // declared), each refused before anything is recorded.
        const refused = turns.filter((t) => toolResultImages(t).length > 0).length;
        assert.ok(refused >= 1 && refused <= 6, `${refused} image requests`);
        assert.equal(run.completion.ok, false);
        const shown = run.stdout + run.stderr + (run.completion.error ?? "");
        assert.match(shown, /reads text only/, "the gateway's reason reaches the user");
        console.log(`claude-code shows: ${/[^\n"]*reads text only[^\n"]*/.exec(shown)![0]}`);
        const health = await fetch(`${gw.url}/health`);
        assert.equal(health.status, 200, "the gateway lives");
        await health.body?.cancel();
        const summary = await api(gw, `/api/rollouts/${rollout.id}`);
        assert.deepEqual(summary.turn_list.map((t) => t.status), ["done"], "turn 1 stays");
      });
    } finally {
      await gw.stop();
    }
  },
});

Deno.test({
  name: "e2e claude-code images: a Qwen3-VL policy sees the image Claude Code read" +
    (MISSING ? ` [skipped: ${MISSING}]` : ""),
  ignore: skipGroup("e2e claude-code", MISSING),
  async fn() {
    const dir = await qwen3VlModelDir();
    const model = await PolicyModel.load({ dir });
    const gw = await startGateway(["--model-dir", dir]);
    try {
      await readTheImage(gw, model, async ({ rollout, requests, run, policy }) => {
        assert.ok(run.completion.ok, `Claude Code completes: ${run.completion.error}`);
        assert.equal(run.completion.finalText?.trim(), FINAL);
        const turns = turnRequests(requests);
        const [sent] = toolResultImages(turns[turns.length - 1]);
        const bytes = Uint8Array.from(atob(sent.data), (c) => c.charCodeAt(0));
        const header = readImageHeader(bytes)!;
        const hash = createHash("sha256").update(bytes).digest("hex");
        const count = model.format.vision!.tokens!(header) as number;

        const [, second] = policy.records;
        const [pad] = await model.tokenizer.encode("<|image_pad|>");
        assert.equal(second.prompt_ids.filter((id) => id === pad).length, count, "the pads");
        const finished = await api<
          { samples: { images: { hash: string; start: number; end: number }[] }[] }
        >(
          gw,
          `/api/rollouts/${rollout.id}/finish`,
          { reward: 1 },
        );
        const [image] = finished.samples[0].images;
        assert.equal(image.hash, hash, "the sample names the bytes Claude Code sent");
        assert.equal(image.end - image.start, count);
        const got = await fetch(`${gw.url}/api/images/${hash}`);
        assert.deepEqual(new Uint8Array(await got.arrayBuffer()), bytes, "the bytes by hash");
        console.log(
          `claude-code sent a ${header.width}×${header.height} ${header.mime} ` +
            `(${bytes.length} bytes; the file is ${PNG.bytes.length}) → ${count} image tokens`,
        );
      });
    } finally {
      await gw.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "e2e codex images: view_image's image comes back as input_image; a text-only policy's 400 " +
    "is what Codex shows" + (CODEX_MISSING ? ` [skipped: ${CODEX_MISSING}]` : ""),
  ignore: skipGroup("e2e codex", CODEX_MISSING),
  async fn() {
    const gw = await startGateway();
    const reader = { harness: codex, tool: "view_image", args: (path: string) => ({ path }) };
    try {
      await readTheImage(gw, await PolicyModel.load(), async ({ rollout, requests, run }) => {
        const last = requests[requests.length - 1].body as { input: Record<string, unknown>[] };
        const output = last.input.find((i) => i.type === "function_call_output")?.output;
        assert.ok(Array.isArray(output), "the tool output is a list of parts");
        const [part] = output as { type: string; image_url: string }[];
        assert.equal(part.type, "input_image");
        assert.ok(part.image_url.startsWith("data:image/png;base64,"), "inline, as a data: URL");
        assert.ok(!run.timedOut, "Codex ends by itself");
        assert.equal(run.completion.ok, false);
        assert.match(run.completion.error ?? "", /reads text only/, "Codex shows the reason");
        const summary = await api(gw, `/api/rollouts/${rollout.id}`);
        assert.deepEqual(summary.turn_list.map((t) => t.status), ["done"], "turn 1 stays");
      }, reader);
    } finally {
      await gw.stop();
    }
  },
});

Deno.test({
  name: "e2e gemini-cli images: read_file's image comes back as inlineData; a text-only policy's " +
    "400 is what the Gemini CLI shows" + (GEMINI_MISSING ? ` [skipped: ${GEMINI_MISSING}]` : ""),
  ignore: skipGroup("e2e gemini-cli", GEMINI_MISSING),
  async fn() {
    const gw = await startGateway();
    const reader = {
      harness: geminiCli,
      tool: "read_file",
      args: (path: string) => ({ file_path: path }),
    };
    try {
      await readTheImage(gw, await PolicyModel.load(), async ({ rollout, requests, run }) => {
        const last = requests[requests.length - 1].body as {
          contents: { parts: { inlineData?: { mimeType: string } }[] }[];
        };
        const parts = last.contents[last.contents.length - 1].parts;
        assert.ok(parts.some((p) => p.inlineData?.mimeType === "image/png"), "the image beside");
        assert.ok(!run.timedOut, "the Gemini CLI ends by itself");
        assert.equal(run.completion.ok, false);
        assert.match(run.completion.error ?? "", /reads text only/, "it shows the reason");
        const summary = await api(gw, `/api/rollouts/${rollout.id}`);
        assert.deepEqual(summary.turn_list.map((t) => t.status), ["done"], "turn 1 stays");
      }, reader);
    } finally {
      await gw.stop();
    }
  },
});
