/**
 * Loads SWE-style tasks from
 * - a task directory: `task.json` (patch fields name files next to it, default `test.patch` and
 *   `gold.patch`) and `repo/` (a plain directory, or a git repository read at `base_commit`);
 * - a directory of task directories (e.g. `tasks/`), sorted by name;
 * - a JSONL file of SWE-bench records: `patch` (or `gold_patch`) and `test_patch` hold diff text,
 *   and `repo_path` names the base repository (relative to the JSONL file), a git clone or a
 *   plain directory.
 *
 * @example
 * ```ts
 * const tasks = await loadTasks("tasks");           // every shipped task
 * const [slug] = await loadTasks("tasks/py-slug");  // one
 * ```
 *
 * @module
 */
import { isGitRepo, readDirFiles, readGitFiles } from "./repo_files.ts";
import { parseTaskRecord, type RepoFile, type SweTask, TaskFormatError } from "./task.ts";

/** The tasks shipped with rollgate (`tasks/` at the repository root). */
export const SHIPPED_TASKS_DIR = new URL("../../tasks", import.meta.url).pathname;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

async function repoFiles(
  dir: string,
  baseCommit: string,
): Promise<{ files: RepoFile[]; commit: string }> {
  if (await isGitRepo(dir)) return await readGitFiles(dir, baseCommit || "HEAD");
  if (baseCommit && baseCommit !== "HEAD") {
    throw new TaskFormatError(`${dir}: base_commit ${baseCommit} given but it is not a git repo`);
  }
  return { files: await readDirFiles(dir), commit: "HEAD" };
}

/** One task directory (`task.json`, `repo/`, the patch files). */
export async function loadTaskDir(dir: string): Promise<SweTask> {
  const where = `${dir}/task.json`;
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(await Deno.readTextFile(where));
  } catch (err) {
    throw new TaskFormatError(`${where}: ${(err as Error).message}`);
  }
  const meta = parseTaskRecord(rec, where);
  const patchFile = (key: string, fallback: string) => {
    const name = typeof rec[key] === "string" ? rec[key] as string : fallback;
    if (name.includes("/") || name.startsWith(".")) {
      throw new TaskFormatError(`${where}: ${key} must be a file name in the task directory`);
    }
    return `${dir}/${name}`;
  };
  const { files, commit } = await repoFiles(`${dir}/repo`, meta.base_commit);
  return {
    ...meta,
    base_commit: commit,
    test_patch: await Deno.readTextFile(patchFile("test_patch", "test.patch")),
    gold_patch: await Deno.readTextFile(patchFile("gold_patch", "gold.patch")),
    files,
  };
}

/** Tasks of a JSONL file of SWE-bench-style records. */
export async function loadTasksJsonl(path: string): Promise<SweTask[]> {
  const base = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  const tasks: SweTask[] = [];
  const lines = (await Deno.readTextFile(path)).split("\n");
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    const where = `${path}:${i + 1}`;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line);
    } catch (err) {
      throw new TaskFormatError(`${where}: ${(err as Error).message}`);
    }
    const meta = parseTaskRecord(rec, where);
    const repoPath = rec.repo_path;
    if (typeof repoPath !== "string") {
      throw new TaskFormatError(`${where}: repo_path (the base repository on disk) is required`);
    }
    const gold = rec.patch ?? rec.gold_patch ?? "";
    if (typeof gold !== "string" || typeof rec.test_patch !== "string") {
      throw new TaskFormatError(`${where}: patch and test_patch must hold diff text`);
    }
    const dir = repoPath.startsWith("/") ? repoPath : `${base}/${repoPath}`;
    const { files, commit } = await repoFiles(dir, meta.base_commit);
    tasks.push({
      ...meta,
      base_commit: commit,
      test_patch: rec.test_patch,
      gold_patch: gold,
      files,
    });
  }
  return tasks;
}

/** A task directory, a directory of task directories, or a `.jsonl` file. */
export async function loadTasks(path: string): Promise<SweTask[]> {
  if (await isFile(path)) {
    if (path.endsWith(".jsonl")) return await loadTasksJsonl(path);
    throw new TaskFormatError(`${path}: expected a directory or a .jsonl file`);
  }
  if (await isFile(`${path}/task.json`)) return [await loadTaskDir(path)];
  const names: string[] = [];
  for await (const e of Deno.readDir(path)) {
    if (e.isDirectory && await isFile(`${path}/${e.name}/task.json`)) names.push(e.name);
  }
  names.sort();
  return await Promise.all(names.map((n) => loadTaskDir(`${path}/${n}`)));
}
