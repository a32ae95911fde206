/**
 * Reads a task's base repository into memory: a plain directory (skipping `.git`, `node_modules`,
 * `__pycache__`), or, for a git repository, the tree of a given commit (`git ls-tree` +
 * `git cat-file`), so SWE-bench records pointing at a local clone and a `base_commit` work.
 *
 * @module
 */
import type { RepoFile } from "./task.ts";

/** Refuse repositories larger than this (tasks are meant to be tiny). */
export const MAX_REPO_FILES = 2_000;

const SKIP = new Set([".git", "node_modules", "__pycache__"]);

async function walk(root: string, rel: string, out: RepoFile[]): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(rel ? `${root}/${rel}` : root)) entries.push(e);
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const e of entries) {
    if (SKIP.has(e.name)) continue;
    const path = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory) await walk(root, path, out);
    else if (e.isFile) {
      const full = `${root}/${path}`;
      const mode = (await Deno.stat(full)).mode ?? 0o644;
      out.push({ path, data: await Deno.readFile(full), executable: (mode & 0o111) !== 0 });
    }
    if (out.length > MAX_REPO_FILES) throw new Error(`${root}: more than ${MAX_REPO_FILES} files`);
  }
}

/** Files of a plain directory tree. */
export async function readDirFiles(root: string): Promise<RepoFile[]> {
  const out: RepoFile[] = [];
  await walk(root, "", out);
  return out;
}

async function git(dir: string, args: string[], stdin?: Uint8Array): Promise<Uint8Array> {
  const child = new Deno.Command("git", {
    args: ["-c", "safe.directory=*", "-C", dir, ...args],
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")} in ${dir}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return out.stdout;
}

/** Files of `commit` in the git repository at `dir`, and the commit's full id. */
export async function readGitFiles(
  dir: string,
  commit: string,
): Promise<{ files: RepoFile[]; commit: string }> {
  const dec = new TextDecoder();
  const sha = dec.decode(await git(dir, ["rev-parse", "--verify", `${commit}^{commit}`])).trim();
  const tree = dec.decode(await git(dir, ["ls-tree", "-r", "-z", sha]));
  const blobs: { path: string; sha: string; executable: boolean }[] = [];
  for (const entry of tree.split("\0")) {
    if (!entry) continue;
    const [meta, path] = [
      entry.slice(0, entry.indexOf("\t")),
      entry.slice(entry.indexOf("\t") + 1),
    ];
    const [mode, type, blob] = meta.split(" ");
    if (type !== "blob" || mode === "120000") continue; // symlinks and submodules are skipped
    blobs.push({ path, sha: blob, executable: mode === "100755" });
  }
  if (blobs.length > MAX_REPO_FILES) throw new Error(`${dir}: more than ${MAX_REPO_FILES} files`);
  const batch = await git(
    dir,
    ["cat-file", "--batch"],
    new TextEncoder().encode(blobs.map((b) => b.sha).join("\n") + "\n"),
  );
  const files: RepoFile[] = [];
  let pos = 0;
  for (const b of blobs) {
    const nl = batch.indexOf(0x0a, pos);
    const size = Number(dec.decode(batch.subarray(pos, nl)).split(" ")[2]);
    files.push({
      path: b.path,
      data: batch.slice(nl + 1, nl + 1 + size),
      executable: b.executable,
    });
    pos = nl + 1 + size + 1;
  }
  return { files, commit: sha };
}

/** Whether `dir` is the top of a git work tree (has a `.git`). */
export async function isGitRepo(dir: string): Promise<boolean> {
  try {
    await Deno.stat(`${dir}/.git`);
    return true;
  } catch {
    return false;
  }
}
