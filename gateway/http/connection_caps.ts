/**
 * How many connections and requests the server takes, and from whom, so that no client can hold
 * it and a balancer in front does not take it down:
 *
 * - connections are capped in all and per remote address; past a cap a new connection gets a 503
 *   and closes, except a health check: up to {@link PROBE_RESERVE} connections past the caps are
 *   still read, and answered only if they ask `/health` or `/ready` (a balancer that finds its
 *   checks refused takes a replica out of service);
 * - a connection from a trusted proxy (`trustedProxies`: the balancer) counts in all but not per
 *   address: every client behind it shares its address. Its requests count per client instead,
 *   the one `X-Forwarded-For` names (its last address that is not a trusted proxy), each client at
 *   most `maxConnectionsPerAddress` requests at once.
 *
 * @module
 */

/** How many connections may be open at once; past either cap a new one gets a 503 and closes. */
export interface ConnectionLimits {
  maxConnections: number;
  /** From one remote address (agents behind one bridge or proxy share it: keep it generous). */
  maxConnectionsPerAddress: number;
  /**
   * Addresses of proxies in front (`10.0.0.2`, or IPv4 ranges `10.0.0.0/24`): their connections
   * count in all only, their requests per client (`X-Forwarded-For`).
   */
  trustedProxies: readonly string[];
}

export const DEFAULT_CONNECTION_LIMITS: Readonly<ConnectionLimits> = {
  maxConnections: 8192,
  maxConnectionsPerAddress: 2048,
  trustedProxies: [],
};

/** Connections past the caps still read, for health checks only. */
export const PROBE_RESERVE = 64;

const PROBES = new Set(["/health", "/ready"]);

/** Whether a request target is a health check (answered on a connection past the caps). */
export function isProbe(target: string): boolean {
  return PROBES.has(target.split("?")[0]);
}

/** `a.b.c.d` as a number, or undefined for anything else. */
function ipv4(address: string): number | undefined {
  const m = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

/** A matcher of the trusted proxies' addresses and ranges. */
function trustedMatcher(list: readonly string[]): (address: string) => boolean {
  const exact = new Set<string>();
  const ranges: { base: number; mask: number }[] = [];
  for (const entry of list) {
    const [addr, bits] = entry.split("/");
    const base = ipv4(addr);
    if (bits !== undefined && base !== undefined) {
      const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
      ranges.push({ base: (base & mask) >>> 0, mask });
    } else exact.add(addr);
  }
  return (address) => {
    const bare = address.replace(/^::ffff:/, "");
    if (exact.has(address) || exact.has(bare)) return true;
    const n = ipv4(bare);
    return n !== undefined && ranges.some((r) => ((n & r.mask) >>> 0) === r.base);
  };
}

/** What a new connection may do: be served, answer health checks only, or nothing (why not). */
export type Admission = { kind: "open" } | { kind: "probe"; why: string } | {
  kind: "refused";
  why: string;
};

export class ConnectionCaps {
  readonly trusted: (address: string) => boolean;
  #open = 0;
  #probes = 0;
  readonly #perAddress = new Map<string, number>();
  readonly #perClient = new Map<string, number>();

  constructor(readonly limits: ConnectionLimits) {
    this.trusted = trustedMatcher(limits.trustedProxies);
  }

  /** Counts a new connection from `address` (release it with {@link leave}). */
  admit(address: string): Admission {
    const proxy = this.trusted(address);
    const from = this.#perAddress.get(address) ?? 0;
    let why: string | undefined;
    if (this.#open >= this.limits.maxConnections) {
      why = `the gateway's ${this.limits.maxConnections} connections are open`;
    } else if (!proxy && from >= this.limits.maxConnectionsPerAddress) {
      why = `${this.limits.maxConnectionsPerAddress} connections from ${address} are open`;
    }
    if (why === undefined) {
      this.#open++;
      this.#perAddress.set(address, from + 1);
      return { kind: "open" };
    }
    if (this.#probes >= PROBE_RESERVE) return { kind: "refused", why };
    this.#probes++;
    return { kind: "probe", why };
  }

  /** A connection `admit` counted has closed. */
  leave(address: string, admission: Admission): void {
    if (admission.kind === "probe") this.#probes--;
    if (admission.kind !== "open") return;
    this.#open--;
    const left = (this.#perAddress.get(address) ?? 1) - 1;
    if (left > 0) this.#perAddress.set(address, left);
    else this.#perAddress.delete(address);
  }

  /**
   * The client a request counts for: the connection's address, or behind a trusted proxy the one
   * `forwardedFor` names.
   */
  clientOf(address: string, forwardedFor: string | undefined): string {
    if (!this.trusted(address) || !forwardedFor) return address;
    const hops = forwardedFor.split(",").map((h) => h.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!this.trusted(hops[i])) return hops[i];
    return hops[0] ?? address;
  }

  /**
   * Counts a request of a proxied client (`release` when its response ends), or says why it is
   * refused: the client has as many requests open as one address may have connections.
   */
  enter(client: string): { release(): void } | { refused: string } {
    const n = this.#perClient.get(client) ?? 0;
    if (n >= this.limits.maxConnectionsPerAddress) {
      return {
        refused: `${this.limits.maxConnectionsPerAddress} requests from ${client} are open`,
      };
    }
    this.#perClient.set(client, n + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#perClient.get(client) ?? 1) - 1;
        if (left > 0) this.#perClient.set(client, left);
        else this.#perClient.delete(client);
      },
    };
  }
}
