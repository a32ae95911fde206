/**
 * The `NOTIFY` channels replicas listen on, named once for the statements that notify and the
 * replicas that listen.
 *
 * @module
 */

/** A request was queued: one long poll of each replica looks. */
export const QUEUE_CHANNEL = "rollgate_queue";
/** Samples were logged: sample streams read on. */
export const SAMPLES_CHANNEL = "rollgate_samples";
/** The gateway-wide pause changed (`paused` or `running`). */
export const PAUSE_CHANNEL = "rollgate_pause";
/** A replica's own channel is this prefix and its id: its requests' resolutions (`resolved:<id>`). */
export const CHANNEL_PREFIX = "rollgate_";

export function replicaChannel(replica: string): string {
  return CHANNEL_PREFIX + replica;
}
