/**
 * The start-up check of a black-box upstream: the URL in the form its official SDK expects, and
 * its API key. Both mistakes are silent otherwise: the OpenAI SDK appends `/chat/completions` to
 * its base URL (so `http://host:port` without `/v1` reaches a path real servers 404), the
 * Anthropic SDK appends `/v1/messages` (so a URL ending in `/v1` reaches `/v1/v1/messages`), and
 * a missing key is sent as the placeholder `missing`. `serve` and `rollout` run it before they
 * listen.
 *
 * @module
 */
import { isLoopbackHost } from "../../security/mod.ts";

/** The hosted-API providers of the black-box backends. */
export type UpstreamProvider = "anthropic" | "openai";

/** The environment variable each provider's key is read from. */
export const UPSTREAM_KEY_VARIABLE: Readonly<Record<UpstreamProvider, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
};

/** An upstream URL or key that cannot work; the message says what to write instead. */
export class UpstreamConfigError extends Error {
  override name = "UpstreamConfigError";
}

const EXAMPLE: Readonly<Record<UpstreamProvider, string>> = {
  anthropic: "https://api.anthropic.com (the SDK adds /v1/messages)",
  openai: "https://api.openai.com/v1 or http://127.0.0.1:8000/v1 (the SDK adds /chat/completions " +
    "and /responses)",
};

function urlProblem(provider: UpstreamProvider, url: URL): string | null {
  if (url.protocol !== "http:" && url.protocol !== "https:") return "is not an http(s) URL";
  if (url.search || url.hash) return "has a query or fragment; give the base URL alone";
  const path = url.pathname.replace(/\/+$/, "");
  if (provider === "openai") {
    if (path === "") return "has no path: OpenAI-compatible servers serve under /v1";
    if (/\/(chat\/completions|responses|completions)$/.test(path)) {
      return "names an endpoint: give the base URL the endpoints are under";
    }
  } else {
    if (/\/v1(\/messages)?$/.test(path)) {
      return "ends in /v1: the Anthropic SDK adds /v1/messages itself";
    }
  }
  return null;
}

/**
 * Checks one upstream before the gateway starts: throws {@link UpstreamConfigError} for a URL in
 * the wrong form, and for a missing key when the upstream is not on loopback (a hosted API always
 * needs one); returns warnings (a missing key for a local server, which may need none).
 *
 * @param flag how the user gave the URL, named in the messages (`--upstream-openai-url`)
 * @param apiKey the key the upstream will send; default: its provider's environment variable
 */
export function checkUpstream(
  provider: UpstreamProvider,
  rawUrl: string,
  flag: string,
  apiKey: string | undefined = Deno.env.get(UPSTREAM_KEY_VARIABLE[provider]),
): string[] {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new UpstreamConfigError(
      `${flag} ${rawUrl} is not a URL; expected e.g. ${EXAMPLE[provider]}`,
    );
  }
  const problem = urlProblem(provider, url);
  if (problem) {
    throw new UpstreamConfigError(
      `${flag} ${rawUrl} ${problem}; expected e.g. ${EXAMPLE[provider]}`,
    );
  }
  if (apiKey) return [];
  const variable = UPSTREAM_KEY_VARIABLE[provider];
  if (!isLoopbackHost(url.hostname)) {
    throw new UpstreamConfigError(
      `${variable} is not set: the ${provider} upstream at ${url.origin} needs an API key`,
    );
  }
  return [
    `${variable} is not set; the local ${provider} upstream at ${url.origin} gets the ` +
    `placeholder key "missing"`,
  ];
}
