/**
 * The container's health check: exit 0 when `GET /health` on this gateway answers 200, else 1.
 * Standalone (no imports) so that it starts fast and loads nothing of the gateway.
 *
 * @module
 */
const port = Deno.env.get("ROLLGATE_PORT") || "7860";
try {
  const res = await fetch(`http://127.0.0.1:${port}/health`, {
    signal: AbortSignal.timeout(4_000),
  });
  await res.body?.cancel();
  Deno.exit(res.ok ? 0 : 1);
} catch (e) {
  console.error(`health check failed: ${(e as Error).message}`);
  Deno.exit(1);
}
