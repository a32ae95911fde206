/**
 * pass@k: the chance that at least one of k samples drawn (without replacement) from a task's n
 * graded samples passes, given that c of the n passed. The unbiased estimator of Chen et al.
 * (2021), `1 − C(n−c, k) / C(n, k)`, computed as a product so large n do not overflow. With n = k
 * it is "any sample passed"; with k = 1 the pass rate.
 *
 * @module
 */

/** pass@k of `c` passing samples out of `n`; `null` when fewer than k samples were graded. */
export function passAtK(n: number, c: number, k: number): number | null {
  if (!Number.isInteger(k) || k < 1 || c < 0 || c > n) {
    throw new RangeError(`pass@k needs 1 ≤ k and 0 ≤ c ≤ n, got n=${n} c=${c} k=${k}`);
  }
  if (n < k) return null;
  if (n - c < k) return 1;
  // C(n−c, k) / C(n, k) = ∏_{i=n−c+1}^{n} (1 − k/i)
  let failAll = 1;
  for (let i = n - c + 1; i <= n; i++) failAll *= 1 - k / i;
  return 1 - failAll;
}

const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/** The k a summary reports for `samples` samples per task: 1, 2, 5, 10, … below it, and it. */
export function reportedKs(samples: number): number[] {
  return [...STEPS.filter((k) => k < samples), Math.max(1, samples)];
}
