/**
 * What can go wrong with the journal file, each error saying what happened, to which file, and
 * what the operator can do about it.
 *
 * @module
 */

/** The data directory is in use by another running gateway. */
export class JournalLockedError extends Error {
  override name = "JournalLockedError";
}

/**
 * The journal on disk is damaged or holds less than was acknowledged: the gateway does not start
 * on it (restoring part of it would hand back some rollouts and silently drop the others).
 */
export class JournalDamagedError extends Error {
  override name = "JournalDamagedError";

  constructor(readonly path: string, why: string, mark?: string) {
    const dir = path.slice(0, path.lastIndexOf("/")) || ".";
    super(
      `the journal ${path} is damaged: ${why}. rollgate does not start on it, so nothing acknowledged is dropped unnoticed. ` +
        `Keep a copy of ${dir} first. Then either start with what the file still holds` +
        (mark
          ? ` (remove ${mark}; the changes past it are lost)`
          : ` (\`sqlite3 ${path} ".recover" | sqlite3 ${path}.recovered\`, then move ${path}.recovered to ${path} and remove its -wal, -shm and -acked files)`) +
        `, or start empty with another --data-dir. Samples the trainer already read are not affected.`,
    );
  }
}

/** Why a write failed, in words, from SQLite's result code (node:sqlite `errcode`). */
function cause(e: unknown): string {
  const err = e as { errcode?: number; code?: string; message?: string };
  const primary = (err.errcode ?? -1) & 0xff;
  const said = err.message ?? String(e);
  if (primary === 13 || err.code === "ENOSPC" || /disk is full/.test(said)) {
    return `the disk is full (${said})`;
  }
  if (primary === 8 || err.code === "EROFS" || err.code === "EACCES" || /readonly/.test(said)) {
    return `the file system is read-only or the file is not writable (${said})`;
  }
  if (primary === 10 || err.code === "EIO" || /I\/O error/.test(said)) {
    return `an I/O error (${said})`;
  }
  return said;
}

/** The error every write gets once one failed (the journal then refuses all later writes). */
export function writeFailure(path: string, e: unknown): Error {
  return new Error(
    `${path} cannot be written: ${
      cause(e)
    }. Nothing more is written to it and no new work is taken; ` +
      `every change acknowledged before this is in it. Fix the cause (free space, make it writable) and restart the gateway`,
  );
}
