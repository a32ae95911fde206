/**
 * Image size and cold start of the container: builds the image from the bases made on this
 * machine (`deploy/local_base.sh`), then starts it `--runs` times and measures the time from
 * `podman run` to the first 200 from `GET /ready` (the model files loaded). Needs root and podman.
 *
 *     deno run -A bench/container_start.ts [--runs 5]
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  buildImage,
  freePort,
  localBases,
  must,
  run,
  RUN_FLAGS,
  waitFor200,
} from "../tests/deploy/support/podman.ts";

const { values } = parseArgs({ args: Deno.args, options: { runs: { type: "string" } } });
const runs = Number(values.runs ?? 5);
const tag = `localhost/rollgate-bench:${crypto.randomUUID().slice(0, 8)}`;
const load = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

const bases = await localBases();
const buildSeconds = await buildImage(tag, bases);
try {
  const size = Number(await must("podman", ["image", "inspect", tag, "--format", "{{.Size}}"]));
  console.log(`image: ${(size / 1e6).toFixed(0)} MB (built in ${buildSeconds.toFixed(1)} s)`);
  const starts: number[] = [];
  for (let i = 0; i < runs; i++) {
    const name = `rollgate-bench-${crypto.randomUUID().slice(0, 8)}`;
    const port = freePort();
    const started = performance.now();
    await must("podman", [
      "run",
      "--detach",
      "--name",
      name,
      ...RUN_FLAGS,
      "--publish",
      `127.0.0.1:${port}:7860`,
      "--env",
      `ROLLGATE_ADMIN_TOKEN=bench-${crypto.randomUUID()}`,
      tag,
    ]);
    try {
      await waitFor200(`http://127.0.0.1:${port}/ready`, 60_000);
      starts.push((performance.now() - started) / 1000);
    } finally {
      await run("podman", ["rm", "--force", "--time", "0", name]);
    }
  }
  starts.sort((a, b) => a - b);
  const median = starts[Math.floor(starts.length / 2)];
  console.log(
    `cold start to /ready over ${runs} runs: median ${median.toFixed(2)} s, ` +
      `min ${starts[0].toFixed(2)} s, max ${starts.at(-1)!.toFixed(2)} s (load ${load()})`,
  );
} finally {
  await run("podman", ["rmi", "--force", tag]);
}
