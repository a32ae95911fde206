/** Arithmetic mean of a non-empty array of numbers. */
export function mean(xs) {
  if (xs.length === 0) throw new RangeError("mean of an empty array");
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Median of a non-empty array of numbers (the mean of the two middle values for even lengths). */
export function median(xs) {
  if (xs.length === 0) throw new RangeError("median of an empty array");
  const sorted = xs.slice().sort();
  return sorted[Math.floor(sorted.length / 2)];
}
