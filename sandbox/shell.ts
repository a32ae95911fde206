/**
 * Small helpers shared by the backends: POSIX shell quoting and inside-sandbox path resolution.
 *
 * @module
 */

/** Quotes `s` as one POSIX shell word. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Resolves `path` inside the sandbox: relative to `workdir`, `.` and `..` folded, never above `/`.
 *
 * @example
 * ```ts
 * resolveInside("/workspace", "src/../a.txt"); // "/workspace/a.txt"
 * ```
 */
export function resolveInside(workdir: string, path: string): string {
  const full = path.startsWith("/") ? path : `${workdir.replace(/\/+$/, "")}/${path}`;
  const parts: string[] = [];
  for (const part of full.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/** The parent directory of an absolute inside path (`/` for top-level entries). */
export function parentDir(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Base64 of bytes, for moving binary data through text-only channels. */
export function toBase64(data: Uint8Array): string {
  let s = "";
  for (let i = 0; i < data.length; i += 0x8000) {
    s += String.fromCharCode(...data.subarray(i, i + 0x8000));
  }
  return btoa(s);
}
