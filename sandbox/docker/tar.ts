/**
 * The little tar the Docker archive endpoints need: one regular file in (`PUT
 * /containers/{id}/archive`, ustar, long paths via a PAX header) and the first regular file out
 * (`GET …/archive` answers a tar of the requested path).
 *
 * @module
 */

const BLOCK = 512;
const enc = new TextEncoder();
const dec = new TextDecoder();

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, size: number, mode: number, type: string): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (off: number, s: string) => h.set(enc.encode(s), off);
  put(0, name.slice(0, 100));
  put(100, octal(mode & 0o7777, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  put(124, octal(size, 12));
  put(136, octal(Math.floor(Date.now() / 1000), 12));
  put(148, "        ");
  put(156, type);
  put(257, "ustar\0");
  put(263, "00");
  let sum = 0;
  for (const b of h) sum += b;
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.length / BLOCK) * BLOCK);
  out.set(data);
  return out;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len = String(len).length + body.length;
  return `${len}${body}`;
}

/** A tar holding one regular file at `path` (relative, no leading `/`). */
export function tarOneFile(path: string, data: Uint8Array, mode = 0o644): Uint8Array {
  const parts: Uint8Array[] = [];
  const nameBytes = enc.encode(path).length;
  if (nameBytes > 100) {
    const pax = enc.encode(paxRecord("path", path));
    parts.push(header("././@PaxHeader", pax.length, 0o644, "x"), padded(pax));
  }
  parts.push(header(path, data.length, mode, "0"), padded(data), new Uint8Array(BLOCK * 2));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function field(h: Uint8Array, off: number, len: number): string {
  const raw = h.subarray(off, off + len);
  const end = raw.indexOf(0);
  return dec.decode(end === -1 ? raw : raw.subarray(0, end));
}

/** The first regular file of a tar: its name and bytes; undefined when there is none. */
export function untarFirstFile(tar: Uint8Array): { name: string; data: Uint8Array } | undefined {
  let pos = 0;
  let longName: string | undefined;
  while (pos + BLOCK <= tar.length) {
    const h = tar.subarray(pos, pos + BLOCK);
    if (h.every((b) => b === 0)) return undefined;
    const size = parseInt(field(h, 124, 12).trim() || "0", 8);
    const type = field(h, 156, 1) || "0";
    const body = tar.subarray(pos + BLOCK, pos + BLOCK + size);
    pos += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(dec.decode(body));
      if (m) longName = m[1];
    } else if (type === "L") {
      longName = field(body, 0, body.length);
    } else if (type === "0" || type === "7") {
      const prefix = field(h, 345, 155);
      const name = longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
      return { name, data: body.slice() };
    } else {
      longName = undefined;
    }
  }
  return undefined;
}
