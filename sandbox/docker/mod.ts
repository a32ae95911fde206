/**
 * The Docker Engine API backend (v1.41 over a Unix socket; Docker or Podman), no npm package:
 * containers as sandboxes, streamed exec, archive-based files, the gateway bridge bind-mounted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tarOneFile, untarFirstFile } from "./mod.ts";
 *
 * // `new DockerProvider()` runs sandboxes through the Docker Engine API; files go in as tar.
 * const data = new TextEncoder().encode("print('hi')\n");
 * const tar = tarOneFile("work/main.py", data);
 * assert.equal(tar.length % 512, 0);
 * assert.deepEqual(untarFirstFile(tar), { name: "work/main.py", data });
 * ```
 *
 * @module
 */
export { DockerProvider, type DockerProviderOptions } from "./docker_provider.ts";
export { DockerApiError, DockerEngine, findDockerSocket } from "./engine_client.ts";
export { demuxRawStream, rawFrame } from "./raw_stream.ts";
export { tarOneFile, untarFirstFile } from "./tar.ts";
