/**
 * Reading a Markdown file the way GitHub renders it, for the docs checks: its links (outside code),
 * its headings' anchors, and its lines outside code.
 *
 * @module
 */

/** One link: where it points, and the line it is on (1-based). */
export interface Link {
  target: string;
  line: number;
}

/** The lines of `text` that are not inside a fenced code block, with their numbers. */
export function proseLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
    } else if (open) {
      fence = open[1];
    } else {
      out.push({ text: line, line: i + 1 });
    }
  });
  return out;
}

/** `line` without its inline code spans (what is in backticks is never a link). */
function withoutCode(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, "");
}

/** Every link of `text` outside code: inline, image, reference definitions and HTML. */
export function markdownLinks(text: string): Link[] {
  const links: Link[] = [];
  for (const { text: raw, line } of proseLines(text)) {
    const prose = withoutCode(raw);
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: m[1], line });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (definition) links.push({ target: definition[1], line });
    for (const m of prose.matchAll(/\b(?:href|src)="([^"]+)"/g)) links.push({ target: m[1], line });
  }
  return links;
}

/** GitHub's anchor of a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text
    .replace(/`/g, "")
    .replace(/\*/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N} _-]/gu, "").replace(/ /g, "-");
}

/** Every anchor `text` defines: its headings' (duplicates get `-1`, `-2`, …) and HTML ids. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = headingSlug(heading[1]);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      out.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]);
  }
  return out;
}
