import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ImageDirectory } from "./image_directory.ts";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

Deno.test("image directory: an image is written once, whole, and read back by hash", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-image-dir-" });
  try {
    const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => i % 256);
    const hash = sha(bytes);
    const images = new ImageDirectory(dir);
    await Promise.all([images.putImage(hash, bytes), images.putImage(hash, bytes)]);
    const path = images.path(hash);
    assert.equal(path, `${dir}/${hash.slice(0, 2)}/${hash}`);
    const first = await Deno.stat(path);
    await images.putImage(hash, bytes);
    // A fresh store (a restarted gateway) finds it on disk and does not write it again.
    await new ImageDirectory(dir).putImage(hash, bytes);
    const again = await Deno.stat(path);
    assert.deepEqual([again.ino, again.mtime], [first.ino, first.mtime]);
    assert.deepEqual([...Deno.readDirSync(`${dir}/${hash.slice(0, 2)}`)].map((e) => e.name), [
      hash,
    ]);
    assert.deepEqual(await images.readImage(hash), bytes);
    assert.equal(await images.readImage(sha(new Uint8Array([1]))), null);
    // Only a hash names a file: anything else reads as nothing, and is never written.
    assert.equal(await images.readImage("../../etc/passwd"), null);
    await assert.rejects(() => images.putImage("../x", bytes), /not an image hash/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
