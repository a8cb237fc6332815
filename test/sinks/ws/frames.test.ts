// Unit tests of the prepared WebSocket frames and the per-tick write batching of the fan-out.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import * as wsModule from "ws";
import { textFrame } from "../../../src/sinks/ws/frames.js";
import { createTickBatch } from "../../../src/sinks/ws/tick-batch.js";

/** ws's own framing (not in its type declarations): what `WebSocket#send` writes for a server text frame. */
const { Sender } = wsModule as unknown as {
  Sender: { frame(data: Buffer, options: Record<string, unknown>): Buffer[] };
};

describe("textFrame", () => {
  it.each([0, 1, 125, 126, 65_535, 65_536, 70_000])(
    "writes the bytes ws frames a %i-byte text message with",
    (payloadBytes) => {
      const text = "é".repeat(Math.floor(payloadBytes / 2)) + "x".repeat(payloadBytes % 2);
      const payload = Buffer.from(text, "utf8");
      const expected = Buffer.concat(
        Sender.frame(payload, { fin: true, opcode: 1, mask: false, readOnly: true, rsv1: false }),
      );
      expect(textFrame(text).equals(expected)).toBe(true);
    },
  );
});

/** A writable that records each batch of chunks the stream hands to the "socket". */
function recorder(): { stream: Writable; writes: string[][] } {
  const writes: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push([chunk.toString()]);
      callback();
    },
    writev(chunks, callback) {
      writes.push(chunks.map(({ chunk }) => (chunk as Buffer).toString()));
      callback();
    },
  });
  return { stream, writes };
}

describe("createTickBatch", () => {
  it("writes a tick's first event at once and the rest of the tick's events together at its end", async () => {
    const batch = createTickBatch();
    const { stream, writes } = recorder();
    for (const event of ["a", "b", "c", "d"]) {
      if (batch.startEvent()) batch.hold(stream);
      stream.write(event);
    }
    expect(writes).toEqual([["a"]]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(writes).toEqual([["a"], ["b", "c", "d"]]);
    expect(stream.writableCorked).toBe(0);
    // the next tick starts afresh: its first event is written at once again
    expect(batch.startEvent()).toBe(false);
    stream.write("e");
    expect(writes).toHaveLength(3);
  });

  it("flushes a socket early once it holds 16 KiB, so held bytes stay bounded", () => {
    const batch = createTickBatch();
    const { stream, writes } = recorder();
    batch.startEvent();
    const chunk = "x".repeat(6 * 1024);
    for (let i = 0; i < 4; i++) {
      if (batch.startEvent()) batch.hold(stream);
      stream.write(chunk);
    }
    // held: 6 KiB, 12 KiB, 18 KiB → flushed before the fourth write
    expect(writes.map((w) => w.length)).toEqual([3]);
    expect(stream.writableLength).toBe(6 * 1024);
  });
});
