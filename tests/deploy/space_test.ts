/**
 * The Hugging Face Space: the card's front matter makes it a Docker Space on the port the image
 * serves, and `deploy/space/assemble.sh` fills a Space clone with the committed tree and the card.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

function frontMatter(text: string): Record<string, string> {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  assert.ok(m, "the Space card starts with YAML front matter");
  return Object.fromEntries(
    m[1].split("\n").map((l) => /^(\w+):\s*(.*)$/.exec(l)!).map((kv) => [kv[1], kv[2]]),
  );
}

Deno.test("space: a Docker Space on the port the image serves, as UID 1000", async () => {
  const card = frontMatter(await Deno.readTextFile(ROOT + "deploy/space/README.md"));
  assert.equal(card.sdk, "docker");
  assert.equal(card.app_port, "7860");
  assert.ok(card.title);
  assert.ok(card.short_description.length <= 60, "Spaces cap short_description at 60 characters");
  const dockerfile = await Deno.readTextFile(ROOT + "Dockerfile");
  assert.match(dockerfile, new RegExp(`^EXPOSE ${card.app_port}$`, "m"));
  assert.match(dockerfile, new RegExp(`ROLLGATE_PORT=${card.app_port}\\b`));
  assert.match(dockerfile, /ROLLGATE_HOST=0\.0\.0\.0/);
  assert.match(dockerfile, /^USER 1000:1000$/m);
  assert.match(dockerfile, /^HEALTHCHECK /m);
});

Deno.test("space: assemble.sh fills a Space clone with the committed tree and the card", async () => {
  const target = await Deno.makeTempDir({ prefix: "rollgate-space-" });
  try {
    await Deno.mkdir(`${target}/.git`);
    await Deno.writeTextFile(`${target}/.git/HEAD`, "ref: refs/heads/main\n");
    await Deno.writeTextFile(`${target}/stale.txt`, "from an older push");
    const out = await new Deno.Command("bash", {
      args: [ROOT + "deploy/space/assemble.sh", target],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const names = new Set([...Deno.readDirSync(target)].map((e) => e.name));
    for (
      const name of ["Dockerfile", ".dockerignore", "package.json", "package-lock.json", "main.ts"]
    ) {
      assert.ok(names.has(name), name);
    }
    assert.ok(!names.has("stale.txt"), "old contents are replaced");
    assert.ok(!names.has("node_modules"));
    assert.equal(await Deno.readTextFile(`${target}/.git/HEAD`), "ref: refs/heads/main\n");
    assert.equal(
      await Deno.readTextFile(`${target}/README.md`),
      await Deno.readTextFile(ROOT + "deploy/space/README.md"),
    );
    assert.match(await Deno.readTextFile(`${target}/README.project.md`), /^# rollgate/);
  } finally {
    await Deno.remove(target, { recursive: true });
  }
});
