/**
 * The E2B provider, on the real `e2b` SDK. Connection settings (`apiKey`, `domain`, `apiUrl`,
 * `sandboxUrl`) are passed explicitly on every call, falling back to `E2B_API_KEY`, `E2B_DOMAIN`,
 * `E2B_API_URL`, `E2B_SANDBOX_URL`, so self-hosted and E2B-compatible deployments work.
 *
 * A cloud sandbox cannot reach the operator's loopback: `spec.gateway.url` must be a public or
 * tunnelled URL (identity rides on the `/rollout/<id>` path and the bearer token).
 * `network: "gateway-only"` then denies all egress except the gateway's host (E2B `network`
 * rules, from the SDK's docs; not verified against the live service); `"none"` turns internet
 * access off.
 *
 * @example
 * ```ts
 * const e2b = new E2BProvider({ defaultTemplate: "rollgate-swe" });
 * await e2b.preflight(); // throws one clear error when E2B cannot be used
 * ```
 *
 * @module
 */
import { ALL_TRAFFIC, Sandbox as E2BSdkSandbox, type SandboxOpts } from "e2b";
import {
  DEFAULT_WORKDIR,
  networkMode,
  SandboxError,
  type SandboxProvider,
  type SandboxSpec,
} from "../sandbox.ts";
import { shellQuote } from "../shell.ts";
import {
  describeE2BError,
  E2B_FIX,
  e2bApiKey,
  e2bApiUrl,
  type E2BConnection,
} from "./e2b_errors.ts";
import { E2BSandbox } from "./e2b_sandbox.ts";

/** Sandbox lifetime when the spec sets none: 1 hour (E2B Hobby's maximum). */
export const DEFAULT_E2B_LIFETIME_MS = 3_600_000;

export interface E2BProviderOptions extends E2BConnection {
  /** Timeout of each API call; default 30 s (the SDK's default is 60 s). */
  requestTimeoutMs?: number;
  /** Template for specs whose image is `"local"` (or empty); default E2B's `base`. */
  defaultTemplate?: string;
  /** User commands run as; default `"user"`. */
  user?: string;
  /** Budget of the preflight's list call; default 5 s. */
  preflightTimeoutMs?: number;
}

/** E2B {@link SandboxProvider}. */
export class E2BProvider implements SandboxProvider {
  readonly name = "e2b";
  #o: E2BProviderOptions;

  constructor(opts: E2BProviderOptions = {}) {
    this.#o = opts;
  }

  #connection() {
    return {
      apiKey: e2bApiKey(this.#o),
      domain: this.#o.domain,
      apiUrl: this.#o.apiUrl,
      sandboxUrl: this.#o.sandboxUrl,
    };
  }

  /** Lists sandboxes with a short budget (5 s): proves the key, the DNS and the endpoint. */
  async preflight(): Promise<void> {
    const url = e2bApiUrl(this.#o);
    if (!e2bApiKey(this.#o)) {
      throw new SandboxError(`E2B API key missing (API ${url}); ${E2B_FIX}`);
    }
    const timeoutMs = this.#o.preflightTimeoutMs ?? 5_000;
    try {
      // `apiUrl` is honoured at runtime though SandboxListOpts does not declare it.
      const opts = { ...this.#connection(), requestTimeoutMs: timeoutMs, retries: 0, limit: 1 };
      await E2BSdkSandbox.list(opts as Parameters<typeof E2BSdkSandbox.list>[0]).nextItems();
    } catch (err) {
      throw describeE2BError(err, url, timeoutMs);
    }
  }

  async create(spec: SandboxSpec): Promise<E2BSandbox> {
    const mode = networkMode(spec);
    const url = e2bApiUrl(this.#o);
    if (mode === "gateway-only" && !spec.gateway?.url) {
      throw new SandboxError(
        "e2b sandbox: a cloud sandbox cannot reach a local gateway socket; give spec.gateway.url " +
          "(a public or tunnelled URL of the gateway)",
      );
    }
    const template = !spec.image || spec.image === "local"
      ? this.#o.defaultTemplate ?? "base"
      : spec.image;
    const requestTimeoutMs = this.#o.requestTimeoutMs ?? 30_000;
    const opts: SandboxOpts = {
      ...this.#connection(),
      requestTimeoutMs,
      timeoutMs: spec.lifetimeMs ?? DEFAULT_E2B_LIFETIME_MS,
      metadata: spec.labels,
      envs: spec.env,
    };
    if (mode === "none") opts.allowInternetAccess = false;
    if (mode === "gateway-only") {
      opts.network = { denyOut: [ALL_TRAFFIC], allowOut: [new URL(spec.gateway!.url!).hostname] };
    }
    let sdk: E2BSdkSandbox;
    try {
      sdk = await E2BSdkSandbox.create(template, opts);
    } catch (err) {
      throw describeE2BError(err, url);
    }
    const workdir = spec.workdir ?? DEFAULT_WORKDIR;
    const user = this.#o.user ?? "user";
    try {
      const setup = await sdk.commands.run(
        `mkdir -p ${shellQuote(workdir)} && chown ${shellQuote(user)} ${shellQuote(workdir)}`,
        { user: "root", timeoutMs: 60_000, requestTimeoutMs },
      );
      if (setup.exitCode !== 0) throw new Error(setup.stderr);
    } catch (err) {
      await sdk.kill({ requestTimeoutMs }).catch(() => {});
      throw new SandboxError(
        `e2b sandbox: preparing ${workdir} failed: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    return new E2BSandbox({
      sdk,
      workdir,
      gatewayUrl: mode === "none" ? "" : spec.gateway?.url?.replace(/\/+$/, "") ?? "",
      user,
      requestTimeoutMs,
      lifetimeMs: spec.lifetimeMs,
    });
  }
}
