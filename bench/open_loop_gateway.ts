/**
 * The gateway process of the open-loop load bench (`bench/open_loop.ts` starts it): the real
 * `createGateway` served by `Deno.serve` on a loopback port, every rollout generating with the
 * instant backend double, which answers each turn with the ids of one scripted tool call.
 * Prints `{"port": N}` on its first stdout line once it listens.
 *
 *     deno run -A bench/open_loop_gateway.ts
 *
 * @module
 */
import { createGateway } from "../gateway/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { InstantBackend } from "./instant_backend.ts";
import { MEASURED_OUTPUT } from "./turn_fixture.ts";

const model = await PolicyModel.load();
const backend = new InstantBackend();
backend.answerWith(await model.tokenizer.encode(MEASURED_OUTPUT));
const gw = createGateway({ model, backends: { instant: backend }, defaultBackend: "instant" });
const server = Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen({ port }) {
    console.log(JSON.stringify({ port }));
  },
}, gw.app.fetch);
await server.finished;
