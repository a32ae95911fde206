/**
 * The states of a request in the `pending` table, declared once: every statement that asks
 * whether a request is still open reads {@link OPEN_STATES}. (The partial index `pending_open` of
 * migration 1 spells the same list out; `request_rows_test.ts` checks it still matches.)
 *
 * @module
 */

/** A trainer can still take, lease, append to, complete or fail a request in these states. */
export const OPEN_STATES = ["queued", "delivered", "leased"] as const;

export type OpenState = typeof OPEN_STATES[number];

/** Every state a request row can be in: open, or how it ended. */
export type RequestState = OpenState | "completed" | "failed" | "withdrawn";

/** Whether a request in `state` is still open. */
export function isOpen(state: string): state is OpenState {
  return (OPEN_STATES as readonly string[]).includes(state);
}
