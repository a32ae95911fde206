const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/**
 * Parses a duration such as "45s", "1h30m" or "2h5m10s" into milliseconds.
 * Units: h, m, s, ms. Throws a TypeError for anything else.
 */
export function parseDuration(text) {
  const match = /^(\d+)(ms|h|m|s)/.exec(text.trim());
  if (!match) throw new TypeError(`not a duration: ${JSON.stringify(text)}`);
  return Number(match[1]) * UNIT_MS[match[2]];
}
