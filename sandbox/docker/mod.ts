/**
 * The Docker Engine API backend (v1.41 over a Unix socket; Docker or Podman), no npm package:
 * containers as sandboxes, streamed exec, archive-based files, the gateway bridge bind-mounted.
 *
 * @module
 */
export { DockerProvider, type DockerProviderOptions } from "./docker_provider.ts";
export { DockerApiError, DockerEngine, findDockerSocket } from "./engine_client.ts";
export { demuxRawStream, rawFrame } from "./raw_stream.ts";
export { tarOneFile, untarFirstFile } from "./tar.ts";
