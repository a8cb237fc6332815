// Inflates a recording's files on a worker thread, streaming, and hands their text to the replay synchronously in
// batches of whole lines: reading and gunzip run beside the engine, and no file is ever held in memory whole.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";

/** What the inflater hands over, in order: each file's inflated bytes in batches of whole lines, then its end. */
export type InflatedPiece =
  | {
      readonly kind: "bytes";
      readonly file: number;
      /** Whole lines of UTF-8 (each ends with "\n"), except the last piece of a file cut mid-line. */
      readonly bytes: Uint8Array;
    }
  | {
      readonly kind: "end";
      readonly file: number;
      /** Why the file stops early (unreadable, not gzip, stream damaged), or null when it ended well. */
      readonly damage: string | null;
    };

/** A running inflater. */
export interface Inflater {
  /** The next piece; blocks until the worker has it. */
  next(): InflatedPiece;
  /** Stop the worker (idempotent); pieces not taken are dropped. */
  close(): void;
}

/** Pieces the worker may run ahead of the replay: bounds memory to about this many × BATCH_BYTES. */
const WINDOW_PIECES = 4;
/** Inflated bytes per piece (cut back to the last newline): few enough messages, small enough to pipeline. */
const BATCH_BYTES = 256 * 1024;
/** A worker silent this long while the replay waits has died (it reports its own errors, so this is a crash). */
const STALL_MS = 120_000;
/** How long one wait blocks before the stall clock is checked again. */
const WAIT_SLICE_MS = 1_000;

/** Shared counters: pieces the worker posted, pieces the replay took, and 1 once the replay stopped reading. */
const POSTED = 0;
const TAKEN = 1;
const CLOSED = 2;

/**
 * The worker's code, as a script (eval), so it runs the same from the sources under vitest and from dist: only
 * node: modules, no project import. It inflates each file in turn with a streaming gunzip, cuts the output at the
 * last newline of each batch, moves the bytes to the replay's thread, and blocks while WINDOW_PIECES are posted and not taken.
 */
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const { createReadStream } = require("node:fs");
const { createGunzip } = require("node:zlib");
const { paths, port, shared, windowPieces, batchBytes } = workerData;
const counters = new Int32Array(shared);
let posted = 0;
class Closed extends Error {}
function post(piece, transfer) {
  for (;;) {
    if (Atomics.load(counters, ${CLOSED}) !== 0) throw new Closed();
    const taken = Atomics.load(counters, ${TAKEN});
    if (posted - taken < windowPieces) break;
    // a blocking wait: the inflate stream is paused meanwhile (Atomics.waitAsync would not keep this thread alive)
    Atomics.wait(counters, ${TAKEN}, taken, 1000);
  }
  port.postMessage(piece, transfer);
  posted += 1;
  Atomics.store(counters, ${POSTED}, posted);
  Atomics.notify(counters, ${POSTED});
}
function bytesPiece(file, chunks, length) {
  // the first length bytes of chunks, copied once into a buffer of their own, moved (not cloned) to the replay's thread
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, Math.min(chunk.length, length - at));
    bytes.set(part, at);
    at += part.length;
    if (at === length) break;
  }
  return [{ kind: "bytes", file, bytes }, [bytes.buffer]];
}
function damageOf(error, inflatedBytes) {
  if (error.syscall !== undefined) return "unreadable (" + (error.code ?? "unknown") + ")";
  if (inflatedBytes === 0 && error.code === "Z_DATA_ERROR") return "not a gzip file: " + error.message;
  return "compressed stream damaged: " + error.message;
}
async function inflateFile(file, path) {
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  const input = createReadStream(path);
  input.on("error", (error) => gunzip.destroy(error));
  input.pipe(gunzip);
  let pending = [];
  let pendingBytes = 0;
  let inflatedBytes = 0;
  let damage = null;
  try {
    for await (const chunk of gunzip) {
      inflatedBytes += chunk.length;
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < batchBytes) continue;
      const cut = pendingBytes - chunk.length + chunk.lastIndexOf(10) + 1;
      if (cut <= pendingBytes - chunk.length) continue;
      post(...bytesPiece(file, pending, cut));
      pending = cut < pendingBytes ? [chunk.subarray(chunk.length - (pendingBytes - cut))] : [];
      pendingBytes -= cut;
    }
  } catch (error) {
    if (error instanceof Closed) throw error;
    damage = damageOf(error, inflatedBytes);
  } finally {
    input.destroy();
  }
  if (pendingBytes > 0) post(...bytesPiece(file, pending, pendingBytes));
  post({ kind: "end", file, damage }, []);
}
(async () => {
  for (let file = 0; file < paths.length; file++) await inflateFile(file, paths[file]);
  port.close();
})().catch((error) => {
  if (error instanceof Closed) return;
  port.postMessage({ kind: "fatal", message: String((error && error.stack) || error) });
  Atomics.add(counters, ${POSTED}, 1);
  Atomics.notify(counters, ${POSTED});
});
`;

/** Start inflating `paths` in order on a worker thread. */
export function openInflater(paths: readonly string[]): Inflater {
  const shared = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  const counters = new Int32Array(shared);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { paths, port: port2, shared, windowPieces: WINDOW_PIECES, batchBytes: BATCH_BYTES },
    transferList: [port2],
  });
  worker.unref();
  let taken = 0;
  let closed = false;
  return {
    next: () => {
      const piece = receive(port1, counters, taken);
      taken += 1;
      Atomics.store(counters, TAKEN, taken);
      Atomics.notify(counters, TAKEN);
      return piece;
    },
    close: () => {
      if (closed) return;
      closed = true;
      Atomics.store(counters, CLOSED, 1);
      Atomics.notify(counters, TAKEN);
      port1.close();
      void worker.terminate();
    },
  };
}

/** Block until the worker's next message is there and take it; throws when the worker failed or went silent. */
function receive(port: MessagePort, counters: Int32Array, taken: number): InflatedPiece {
  let waitedMs = 0;
  for (;;) {
    const received = receiveMessageOnPort(port) as { message: InflatedPiece | WorkerFailure } | undefined;
    if (received !== undefined) {
      const { message } = received;
      if (message.kind === "fatal") throw new Error(`recording reader failed: ${message.message}`);
      return message;
    }
    const posted = Atomics.load(counters, POSTED);
    // posted but not yet visible on the port: look again at once
    if (posted > taken) continue;
    if (Atomics.wait(counters, POSTED, posted, WAIT_SLICE_MS) === "timed-out") waitedMs += WAIT_SLICE_MS;
    if (waitedMs >= STALL_MS) throw new Error(`recording reader stalled for ${STALL_MS / 1000} s`);
  }
}

/** The worker's own failure (a bug, not bad input: bad input is a file's `damage`). */
interface WorkerFailure {
  readonly kind: "fatal";
  readonly message: string;
}
