import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { SharedValueHashes } from "./shared_values.ts";

const sha256 = (json: string) => createHash("sha256").update(json).digest("base64url");

Deno.test("SharedValueHashes: an object is serialized and hashed once; equal values, equal hashes", () => {
  const hashes = new SharedValueHashes();
  const tools = [{ name: "bash", parameters: { type: "object" } }];
  const first = hashes.of(tools);
  assert.deepEqual(first, { hash: sha256(JSON.stringify(tools)), json: JSON.stringify(tools) });
  assert.deepEqual(hashes.of(tools), { hash: first.hash }, "the same object: the hash alone");
  const copy = structuredClone(tools);
  assert.deepEqual(hashes.of(copy), first, "another object of the same content: made again");
  assert.notEqual(hashes.of([{ name: "edit" }]).hash, first.hash);
  assert.deepEqual(hashes.of("text"), { hash: sha256('"text"'), json: '"text"' });
  assert.deepEqual(hashes.of("text"), { hash: sha256('"text"'), json: '"text"' }, "not cached");
});
