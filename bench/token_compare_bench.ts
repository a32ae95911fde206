/**
 * `sameToken` takes the same time whether a guess matches none, most or all of the admin token, or
 * has another length: it hashes both sides and compares 32 bytes with `timingSafeEqual`.
 *
 *     deno bench -A bench/token_compare_bench.ts
 *
 * @module
 */
import { sameToken } from "../gateway/security/mod.ts";

const SECRET = "rg-admin-" + "4f9c2a7d1e6b8c3a".repeat(4);
const guesses: Record<string, string> = {
  "equal": SECRET,
  "first character differs": "x" + SECRET.slice(1),
  "last character differs": SECRET.slice(0, -1) + "x",
  "a prefix (shorter)": SECRET.slice(0, 20),
  "empty": "",
};

for (const [name, guess] of Object.entries(guesses)) {
  Deno.bench({ name: `sameToken: ${name}`, group: "sameToken", baseline: name === "equal" }, () => {
    sameToken(guess, SECRET);
  });
}
