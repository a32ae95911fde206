/**
 * Images in turns over real HTTP (issue 35): a Qwen3-VL policy through the gate, two turns (a
 * pasted PNG, then a JPEG in a tool result, as Claude Code sends a screenshot it read), against
 * `transformers`' Qwen3-VL processor and `renderers` over it; the sample's image spans; the
 * bytes by hash from `GET /api/images/:hash`; an image stored once (the retry and the next turn
 * re-send it); a restart from the journal keeping it all. And a text-only policy answering an
 * image with a 400 in each protocol's own shape, recording nothing.
 */
import assert from "node:assert/strict";
import { PolicyModel } from "../../model/mod.ts";
import { SqliteJournal } from "../../journal/mod.ts";
import { toTemplateTools } from "../../model/template_input.ts";
import type { Sample, TurnTreeExport } from "../../trajectory/mod.ts";
import { fixtureImage, IMAGE_FIXTURES } from "../support/image_files.ts";
import { qwen3VlModelDir } from "../support/vision_models.ts";
import { checkLossOwnership } from "../support/loss_ownership.ts";
import { skipGroup } from "../support/skips.ts";
import { processorMissing, withVisionProcessor } from "../reference/vision_env.ts";
import { agentCall, call, READ_FILE_TOOL, take, withGateway } from "./loopback_gateway.ts";

const PNG = await fixtureImage();
const JPEG = await fixtureImage("baseline-640x480.jpg");
const ADMIN = "images-test-admin-token-0123456789abcdef";
const TOOLS = [{
  name: READ_FILE_TOOL.name,
  description: READ_FILE_TOOL.description,
  input_schema: READ_FILE_TOOL.parameters,
}];
const ASK = "What is in this picture? Then read shot.jpg.";
const CALL_TEXT =
  '<tool_call>\n{"name": "read_file", "arguments": {"path": "shot.jpg"}}\n</tool_call><|im_end|>';
const ANSWER_TEXT = "A yellow square and a red disc.<|im_end|>";

const image = (img: typeof PNG) => ({
  type: "image",
  source: { type: "base64", media_type: img.ref.mime, data: img.base64 },
});
const firstRequest = {
  model: "m",
  max_tokens: 200,
  tools: TOOLS,
  messages: [{ role: "user", content: [image(PNG), { type: "text", text: ASK }] }],
};

/** Every file under `dir` with its inode and change time (a rewrite shows). */
async function files(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const shard of Deno.readDir(dir)) {
    for await (const f of Deno.readDir(`${dir}/${shard.name}`)) {
      const s = await Deno.stat(`${dir}/${shard.name}/${f.name}`);
      out.set(f.name, `${s.ino}:${s.ctime?.getTime()}:${s.size}`);
    }
  }
  return out;
}

Deno.test({
  name:
    "images: a Qwen3-VL image turn's prompt is the processor's; spans, bytes by hash, stored once",
  ignore: skipGroup("qwen3-vl images vs transformers", processorMissing()),
  async fn() {
    const modelDir = await qwen3VlModelDir();
    const dataDir = await Deno.makeTempDir({ prefix: "rollgate-images-test-" });
    const model = await PolicyModel.load({ dir: modelDir });
    const journal = new SqliteJournal(dataDir);
    const imagesDir = `${dataDir}/images`;
    try {
      let rolloutId = "", logged: Sample[] = [];
      await withGateway({ model, journal, adminToken: ADMIN }, async (gw) => {
        const r = await gw.rollout();
        rolloutId = r.id;
        const agent1 = agentCall(gw, r, "messages", firstRequest);
        const p1 = await take(gw, r.id);
        const out1 = await model.tokenizer.encode(CALL_TEXT);
        const done1 = await gw.api("POST", `/requests/${p1.request_id}/complete`, {
          output_ids: out1,
          finish_reason: "stop",
        });
        assert.equal(done1.status, 200, JSON.stringify(done1.json));
        const a1 = await agent1;
        assert.equal(a1.status, 200, JSON.stringify(a1.json));
        const toolUse = a1.json.content.find((b: { type: string }) => b.type === "tool_use");
        assert.deepEqual(toolUse.input, { path: "shot.jpg" });
        const stored1 = await files(imagesDir);
        assert.deepEqual([...stored1.keys()], [PNG.ref.hash]);

        // A retry of the same history is the same turn, and writes nothing again.
        const retry = await agentCall(gw, r, "messages", firstRequest);
        assert.deepEqual(retry.json.content, a1.json.content);
        assert.deepEqual(await files(imagesDir), stored1);

        const secondRequest = {
          ...firstRequest,
          messages: [
            ...firstRequest.messages,
            { role: "assistant", content: a1.json.content },
            {
              role: "user",
              content: [{ type: "tool_result", tool_use_id: toolUse.id, content: [image(JPEG)] }],
            },
          ],
        };
        const agent2 = agentCall(gw, r, "messages", secondRequest);
        const p2 = await take(gw, r.id);
        const out2 = await model.tokenizer.encode(ANSWER_TEXT);
        await gw.api("POST", `/requests/${p2.request_id}/complete`, {
          output_ids: out2,
          finish_reason: "stop",
        });
        assert.equal((await agent2).status, 200);
        const stored2 = await files(imagesDir);
        assert.deepEqual([...stored2.keys()].sort(), [PNG.ref.hash, JPEG.ref.hash].sort());
        assert.equal(
          stored2.get(PNG.ref.hash),
          stored1.get(PNG.ref.hash),
          "the PNG is not rewritten",
        );
        // The second prompt extends the first: its prompt and output, then the delta.
        assert.deepEqual(p2.prompt_ids.slice(0, p1.prompt_ids.length + out1.length), [
          ...p1.prompt_ids,
          ...out1,
        ]);

        // The reference: renderers' Qwen3VLRenderer over the processor, and the processor's own
        // expansion of one <|image_pad|> per image in the same text.
        const reference = (withJpeg: boolean) => {
          const messages: unknown[] = [{
            role: "user",
            content: [
              { type: "image", image: IMAGE_FIXTURES + PNG.name },
              { type: "text", text: ASK },
            ],
          }];
          if (withJpeg) {
            messages.push(
              {
                role: "assistant",
                content: "",
                tool_calls: [{
                  id: toolUse.id,
                  type: "function",
                  function: { name: "read_file", arguments: '{"path": "shot.jpg"}' },
                }],
              },
              {
                role: "tool",
                tool_call_id: toolUse.id,
                content: [{ type: "image", image: IMAGE_FIXTURES + JPEG.name }],
              },
            );
          }
          return messages;
        };
        const tools = toTemplateTools([{
          name: READ_FILE_TOOL.name,
          description: READ_FILE_TOOL.description,
          parameters: READ_FILE_TOOL.parameters,
          kind: "function",
        }]);
        const onePad = async (ids: number[]) =>
          (await model.decode(ids)).replace(/(<\|image_pad\|>)+/g, "<|image_pad|>");
        const [r1, r2, e1, e2] = await withVisionProcessor(modelDir, "qwen3-vl", [
          { op: "render", messages: reference(false), tools, add_generation_prompt: true },
          { op: "render", messages: reference(true), tools, add_generation_prompt: true },
          { op: "expand", text: await onePad(p1.prompt_ids), paths: [IMAGE_FIXTURES + PNG.name] },
          {
            op: "expand",
            text: await onePad(p2.prompt_ids),
            paths: [IMAGE_FIXTURES + PNG.name, IMAGE_FIXTURES + JPEG.name],
          },
        ]);
        assert.deepEqual(p1.prompt_ids, r1.ids, "turn 1 = renderers");
        assert.deepEqual(p2.prompt_ids, r2.ids, "turn 2 = renderers");
        assert.deepEqual(p1.prompt_ids, e1.ids, "turn 1 = the processor's expansion");
        assert.deepEqual(p2.prompt_ids, e2.ids, "turn 2 = the processor's expansion");

        const finished = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
        assert.equal(finished.status, 200, JSON.stringify(finished.json));
        const [sample] = finished.json.samples;
        const spans = r2.images!.map(([offset, length]) => [offset, offset + length]);
        assert.deepEqual(
          sample.images.map((i: { start: number; end: number }) => [i.start, i.end]),
          spans,
        );
        assert.deepEqual(sample.images.map((i: { hash: string }) => i.hash), [
          PNG.ref.hash,
          JPEG.ref.hash,
        ]);
        assert.deepEqual(sample.images[1], {
          ...JPEG.ref,
          start: spans[1][0],
          end: spans[1][1],
        });
        const [pad] = await model.tokenizer.encode("<|image_pad|>");
        for (const { start, end } of sample.images) {
          assert.ok(sample.input_ids.slice(start, end).every((id: number) => id === pad));
        }
        const tree = (await gw.api("GET", `/rollouts/${r.id}/tree`)).json as TurnTreeExport;
        checkLossOwnership(tree, finished.json.samples);
        logged = finished.json.samples;

        // The bytes by hash, behind the admin token; a bad or unknown hash says so.
        const got = await fetch(`${gw.url}/api/images/${JPEG.ref.hash}`, {
          headers: { authorization: `Bearer ${ADMIN}` },
        });
        assert.equal(got.status, 200);
        assert.equal(got.headers.get("content-type"), "image/jpeg");
        assert.deepEqual(new Uint8Array(await got.arrayBuffer()), JPEG.bytes);
        assert.equal((await call(`${gw.url}/api/images/${PNG.ref.hash}`)).status, 401);
        assert.equal((await gw.api("GET", `/images/${"0".repeat(64)}`)).status, 404);
        const bad = await gw.api("GET", "/images/..%2F..%2Fjournal.sqlite");
        assert.equal(bad.status, 400);
        assert.match(bad.json.error.message, /sha256/);
      });
      journal.close();

      // Restarted from the journal: the rollout, its samples' spans and the bytes are all back.
      const again = new SqliteJournal(dataDir);
      await withGateway({ model, journal: again, adminToken: ADMIN }, async (gw) => {
        await gw.gw.restore();
        const samples = await gw.api("GET", `/rollouts/${rolloutId}/samples`);
        assert.equal(samples.status, 200, JSON.stringify(samples.json));
        assert.deepEqual(samples.json.samples[0].images, logged[0].images);
        const png = await gw.api("GET", `/images/${PNG.ref.hash}`);
        assert.equal(png.status, 200);
      });
      again.close();
    } finally {
      await Deno.remove(modelDir, { recursive: true });
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});

Deno.test("images: a text-only policy answers an image with a 400 in each protocol's shape", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout();
    // deno-lint-ignore no-explicit-any
    const cases: [string, unknown, (json: any) => string][] = [
      ["messages", firstRequest, (j) => {
        assert.equal(j.type, "error");
        assert.equal(j.error.type, "invalid_request_error");
        return j.error.message;
      }],
      ["messages/count_tokens", { model: "m", messages: firstRequest.messages }, (j) => {
        assert.equal(j.error.type, "invalid_request_error");
        return j.error.message;
      }],
      ["chat/completions", {
        model: "m",
        stream: true,
        messages: [{
          role: "user",
          content: [{ type: "image_url", image_url: { url: PNG.dataUrl } }, {
            type: "text",
            text: "look",
          }],
        }],
      }, (j) => {
        assert.equal(j.error.type, "invalid_request_error");
        return j.error.message;
      }],
      ["responses", {
        model: "m",
        input: [{
          role: "user",
          content: [{ type: "input_image", image_url: JPEG.dataUrl }],
        }],
      }, (j) => {
        assert.equal(j.error.type, "invalid_request_error");
        return j.error.message;
      }],
    ];
    for (const [path, body, message] of cases) {
      const res = await agentCall(gw, r, path, body);
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.json)}`);
      assert.match(message(res.json), /reads text only/, path);
      assert.match(message(res.json), /qwen3/, path);
    }
    const gemini = await call(`${gw.url}/rollout/${r.id}/v1beta/models/m:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": r.token },
      body: {
        contents: [{
          role: "user",
          parts: [{ text: "look" }, { inlineData: { mimeType: "image/png", data: PNG.base64 } }],
        }],
      },
    });
    assert.equal(gemini.status, 400, JSON.stringify(gemini.json));
    assert.equal(gemini.json.error.status, "INVALID_ARGUMENT");
    assert.match(gemini.json.error.message, /reads text only/);
    // A remote image is refused whatever the family, before anything else.
    const remote = await agentCall(gw, r, "chat/completions", {
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }],
      }],
    });
    assert.equal(remote.status, 400);
    assert.match(remote.json.error.message, /does not fetch remote images/);
    // Nothing was recorded.
    const state = await gw.api("GET", `/rollouts/${r.id}`);
    assert.equal(state.json.turns.total, 0, JSON.stringify(state.json));
  });
});
