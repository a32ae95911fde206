/**
 * The SQLite journal's tables: rollouts, their events in order (token ids in binary, shared
 * values once), the sample log with its cursors and each row's checksum, and turns' token rows.
 *
 * @module
 */
import { TOKEN_ROWS_SCHEMA } from "./token_rows_table.ts";

export const SQLITE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS rollouts (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    created_seq INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    rollout TEXT NOT NULL,
    kind TEXT NOT NULL,
    at INTEGER NOT NULL,
    data TEXT NOT NULL,
    arrays BLOB,
    shared TEXT
  );
  CREATE INDEX IF NOT EXISTS events_by_rollout ON events (rollout, seq);
  CREATE TABLE IF NOT EXISTS shared (hash TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS samples (
    cursor INTEGER PRIMARY KEY AUTOINCREMENT,
    rollout TEXT NOT NULL,
    data TEXT NOT NULL,
    arrays BLOB,
    sum INTEGER
  );
${TOKEN_ROWS_SCHEMA}`;
