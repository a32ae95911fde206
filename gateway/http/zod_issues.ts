/**
 * Zod issues as one readable line that names every offending field the way it appears in the
 * body (`messages[1].content[0].text: Invalid input: expected string, received number`), for
 * every protocol and the trainer API alike.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { describeIssues } from "./zod_issues.ts";
 *
 * const schema = z.object({ messages: z.array(z.object({ role: z.string() })) });
 * const result = schema.safeParse({ messages: [{ role: 1 }] });
 * if (!result.success) describeIssues(result.error.issues);
 * // "messages[0].role: Invalid input: expected string, received number"
 * ```
 *
 * @module
 */
import type { z } from "zod";

type Issue = z.core.$ZodIssue;

/** A validation problem, with the path into the request body. */
export interface Problem {
  path: PropertyKey[];
  message: string;
}

/** Whether any issue of a union branch got past the branch's own type check. */
function depth(branch: readonly Issue[]): number {
  return Math.max(
    -1,
    ...branch.map((i) => i.code === "invalid_type" && i.path.length === 0 ? -1 : i.path.length),
  );
}

/**
 * Flattens zod issues to path + message. A failed union (`string | part[]`) is one opaque
 * "Invalid input": the branch that got furthest past its type check is the one the client meant,
 * so its issues are reported instead; when no branch got anywhere, the types it would accept.
 */
export function explainIssues(issues: readonly Issue[], base: PropertyKey[] = []): Problem[] {
  return issues.flatMap((issue) => {
    const path = [...base, ...issue.path];
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const best = issue.errors.reduce((a, b) => depth(b) > depth(a) ? b : a);
      if (depth(best) >= 0) return explainIssues(best, path);
      const expected = issue.errors.flat().flatMap((i) =>
        i.code === "invalid_type" ? [i.expected] : []
      );
      if (issue.message === "Invalid input" && expected.length > 0) {
        return [{ path, message: `Invalid input: expected ${expected.join(" or ")}` }];
      }
    }
    return [{ path, message: issue.message }];
  });
}

/** `["messages", 2, "role"]` → `messages[2].role`; the empty path is the body itself. */
export function formatPath(path: readonly PropertyKey[]): string {
  const text = path
    .map((key, i) => typeof key === "number" ? `[${key}]` : `${i ? "." : ""}${String(key)}`)
    .join("");
  return text || "body";
}

/** Every problem as `path: message`, joined with `; `. */
export function describeIssues(issues: readonly Issue[]): string {
  return explainIssues(issues).map((p) => `${formatPath(p.path)}: ${p.message}`).join("; ");
}
