import assert from "node:assert/strict";
import { checkUpstream } from "./upstream_check.ts";

const flag = "--upstream-openai-url";

Deno.test("upstream check: each SDK's URL form, with what to write instead", () => {
  for (
    const ok of [
      "https://api.openai.com/v1",
      "http://127.0.0.1:8000/v1/",
      "https://h/v1beta/openai",
    ]
  ) {
    assert.deepEqual(checkUpstream("openai", ok, flag, "k"), [], ok);
  }
  for (const ok of ["https://api.anthropic.com", "http://127.0.0.1:9000/", "https://h/anthropic"]) {
    assert.deepEqual(checkUpstream("anthropic", ok, "--upstream-anthropic-url", "k"), [], ok);
  }
  const wrong: [Parameters<typeof checkUpstream>[0], string, RegExp][] = [
    ["openai", "http://127.0.0.1:8000", /has no path: OpenAI-compatible servers serve under \/v1/],
    ["openai", "https://api.openai.com/v1/chat/completions", /names an endpoint/],
    ["openai", "http://h/v1/responses", /names an endpoint/],
    ["openai", "ftp://h/v1", /is not an http\(s\) URL/],
    ["openai", "127.0.0.1:8000/v1", /is not a URL/],
    ["openai", "not a url", /is not a URL/],
    ["openai", "http://h/v1?x=1", /has a query/],
    [
      "anthropic",
      "https://api.anthropic.com/v1",
      /ends in \/v1: the Anthropic SDK adds \/v1\/messages/,
    ],
    ["anthropic", "https://api.anthropic.com/v1/messages", /ends in \/v1/],
  ];
  for (const [provider, url, message] of wrong) {
    assert.throws(() => checkUpstream(provider, url, "--the-flag", "k"), {
      name: "UpstreamConfigError",
      message,
    });
    assert.throws(
      () => checkUpstream(provider, url, "--the-flag", "k"),
      /^UpstreamConfigError: --the-flag /,
    );
  }
  assert.throws(
    () => checkUpstream("openai", "http://h:1", flag, "k"),
    /expected e\.g\. https:\/\/api\.openai\.com\/v1/,
  );
});

Deno.test("upstream check: a missing key is an error for a hosted API, a warning on loopback", () => {
  assert.throws(() => checkUpstream("openai", "https://api.openai.com/v1", flag, ""), {
    name: "UpstreamConfigError",
    message:
      "OPENAI_API_KEY is not set: the openai upstream at https://api.openai.com needs an API key",
  });
  assert.throws(
    () => checkUpstream("anthropic", "https://api.anthropic.com", "--u", undefined),
    /^UpstreamConfigError: ANTHROPIC_API_KEY is not set/,
  );
  for (
    const local of ["http://127.0.0.1:8000/v1", "http://localhost:8000/v1", "http://[::1]:8000/v1"]
  ) {
    const [warning, ...more] = checkUpstream("openai", local, flag, undefined);
    assert.match(
      warning,
      /^OPENAI_API_KEY is not set; the local openai upstream at .* gets the placeholder key "missing"$/,
    );
    assert.deepEqual(more, []);
  }
});
