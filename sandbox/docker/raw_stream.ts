/**
 * Docker's multiplexed exec/attach stream (`application/vnd.docker.raw-stream`, no TTY): frames
 * of an 8-byte header — byte 0 the stream (1 stdout, 2 stderr), bytes 4–7 the big-endian payload
 * length — followed by the payload. Frames may be split across chunks arbitrarily.
 *
 * @module
 */

/** Calls `onFrame` with each frame's stream id and payload as the bytes arrive. */
export async function demuxRawStream(
  body: ReadableStream<Uint8Array>,
  onFrame: (stream: number, payload: Uint8Array) => void,
): Promise<void> {
  let buf = new Uint8Array(0);
  for await (const chunk of body) {
    const next = new Uint8Array(buf.length + chunk.length);
    next.set(buf);
    next.set(chunk, buf.length);
    buf = next;
    let pos = 0;
    while (buf.length - pos >= 8) {
      const size = new DataView(buf.buffer, buf.byteOffset + pos + 4, 4).getUint32(0);
      if (buf.length - pos - 8 < size) break;
      onFrame(buf[pos], buf.slice(pos + 8, pos + 8 + size));
      pos += 8 + size;
    }
    buf = buf.slice(pos);
  }
  if (buf.length > 0) throw new Error(`raw stream ended inside a frame (${buf.length} bytes left)`);
}

/** Encodes one frame (for tests and fakes). */
export function rawFrame(stream: number, payload: Uint8Array | string): Uint8Array {
  const data = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const out = new Uint8Array(8 + data.length);
  out[0] = stream;
  new DataView(out.buffer).setUint32(4, data.length);
  out.set(data, 8);
  return out;
}
