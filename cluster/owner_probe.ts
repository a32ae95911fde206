/**
 * Evidence that a replica is gone, so that its rollouts may move before its lease lapses: its
 * address refuses connections (nothing listens there: the process died), or a replica of another
 * id answers there (it was restarted). A replica that does not answer at all (paused, cut off)
 * is no evidence: it may come back, and only its lapsed lease lets others take its rollouts.
 *
 * @module
 */

/** Where a replica says who it is (answered by the front, `front.ts`). */
export const WHO_PATH = "/_cluster/replica";

/** True when `url` refuses connections or another replica than `replica` answers there. */
export async function replicaGone(
  url: string,
  replica: string,
  timeoutMs = 1_000,
): Promise<boolean> {
  const { hostname, port, protocol } = new URL(url);
  try {
    const conn = await Deno.connect({
      hostname,
      port: Number(port || (protocol === "https:" ? 443 : 80)),
    });
    conn.close();
  } catch (e) {
    return e instanceof Deno.errors.ConnectionRefused;
  }
  try {
    const res = await fetch(url.replace(/\/$/, "") + WHO_PATH, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return false;
    }
    const who = await res.json();
    return typeof who?.replica === "string" && who.replica !== replica;
  } catch {
    return false; // it answers slowly or not at all: no evidence either way
  }
}
