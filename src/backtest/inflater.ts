// Inflates a recording's files on a worker thread, streaming, and hands their text to the replay synchronously in
// batches of whole lines: reading and gunzip run beside the engine, and no file is ever held in memory whole.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";

/**
 * What the inflater hands over, in order: each file's lines in batches, then its end. A batch is columnar so that
 * moving it between threads costs little more than copying its strings: a line that parsed as a flat JSON object
 * (no nested value) is a row naming its shape (its keys, in order) with its values next in `values`; any other
 * line (not JSON, nested, a `__proto__` key) is a row of -1 with its text next in `raw`, to be parsed again where
 * its problem is reported.
 */
export type InflatedPiece =
  | {
      readonly kind: "lines";
      readonly file: number;
      /** Per line: its shape's index in `shapes`, or -1 for the next text of `raw`. */
      readonly rows: Int32Array;
      /** The values of the flat lines, in row order, each line's in its shape's key order. */
      readonly values: readonly unknown[];
      /** The texts of the other lines, in row order. */
      readonly raw: readonly string[];
      /**
       * Every shape seen so far (the keys of a flat line, in order), at most MAX_SHAPES; a row's index stays valid
       * for the whole read.
       */
      readonly shapes: readonly (readonly string[])[];
    }
  | {
      readonly kind: "end";
      readonly file: number;
      /** The file's last line has no newline (cut short): it is not parsed. */
      readonly truncated: boolean;
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
const WINDOW_PIECES = 8;
/** Inflated bytes per piece (cut back to the last newline): few enough messages, small enough to pipeline. */
const BATCH_BYTES = 256 * 1024;
/** Shapes of line (key lists) the worker compares a line's keys with before it looks the shape up by name. */
const RECENT_SHAPES = 4;
/**
 * Shapes the worker keeps for a whole read (a recording has a handful): a hostile or damaged one with a new key set
 * on every line would otherwise grow both threads' shape tables line by line. A flat line of a new shape past the
 * cap goes over as text, which the replay parses and checks the same way.
 */
export const MAX_SHAPES = 4_096;
/**
 * Inflated bytes per gunzip callback: four times zlib's default, for fewer thread-pool round trips (each a wait when
 * the machine is busy). Output before a damaged spot comes out in whole chunks, so a larger one would drop more.
 */
const CHUNK_BYTES = 256 * 1024;
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
 * node: modules, no project import, and nothing of the recording format but "JSON lines". It inflates each file in
 * turn with a streaming gunzip, cuts the output at the last newline of each batch, splits and parses the lines
 * (the replay's largest cost once, now beside it), posts them as a columnar batch (InflatedPiece), and blocks
 * while WINDOW_PIECES are posted and not taken.
 */
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const { isAscii } = require("node:buffer");
const { createReadStream } = require("node:fs");
const { createGunzip } = require("node:zlib");
const { paths, port, shared, windowPieces, batchBytes } = workerData;
const counters = new Int32Array(shared);
let posted = 0;
const shapes = [];
const shapeIds = new Map();
const recentShapes = [];
let newShapes = [];
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
function sameKeys(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
function shapeOf(keys) {
  // lines mostly alternate between a few shapes (response, poll): those are compared before the map is asked
  for (const id of recentShapes) if (sameKeys(shapes[id], keys)) return id;
  const key = JSON.stringify(keys);
  let id = shapeIds.get(key);
  if (id === undefined) {
    if (shapes.length >= ${MAX_SHAPES}) return -1;
    id = shapes.length;
    shapeIds.set(key, id);
    shapes.push(keys);
    newShapes.push(keys);
  }
  recentShapes.unshift(id);
  if (recentShapes.length > ${RECENT_SHAPES}) recentShapes.pop();
  return id;
}
function isFlat(keys, values) {
  // a JSON object whose values are all primitives (else the line goes over as text)
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if ((typeof value === "object" && value !== null) || keys[i] === "__proto__") return false;
  }
  return true;
}
function addLine(batch, line, parse) {
  if (!parse) {
    batch.rows.push(-1);
    batch.raw.push(line);
    return;
  }
  let json;
  try {
    json = JSON.parse(line);
  } catch {
    json = undefined;
  }
  const object = typeof json === "object" && json !== null && !Array.isArray(json);
  // Object.values gives them in Object.keys' order: one builtin call instead of a megamorphic load per key
  const keys = object ? Object.keys(json) : null;
  const values = object ? Object.values(json) : null;
  if (!object || !isFlat(keys, values)) {
    batch.rows.push(-1);
    batch.raw.push(line);
    return;
  }
  const shape = shapeOf(keys);
  batch.rows.push(shape);
  if (shape < 0) batch.raw.push(line);
  else for (let i = 0; i < values.length; i++) batch.values.push(values[i]);
}
function postLines(file, bytes) {
  // whole lines of UTF-8; plain ASCII, as recordings mostly are, is copied as Latin-1, several times faster
  const text = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  const batch = { rows: [], values: [], raw: [] };
  // the replay took every batch posted: it is waiting, so this one goes unparsed (it parses faster than it waits);
  // parsing here only while the replay has batches in hand balances the two threads on a busy machine and an idle one
  const parse = posted > Atomics.load(counters, ${TAKEN});
  let start = 0;
  for (let end = text.indexOf("\\n"); end >= 0; end = text.indexOf("\\n", start)) {
    addLine(batch, text.slice(start, end), parse);
    start = end + 1;
  }
  const rows = Int32Array.from(batch.rows);
  post({ kind: "lines", file, rows, values: batch.values, raw: batch.raw, shapes: newShapes }, [rows.buffer]);
  newShapes = [];
}
function damageOf(error, inflatedBytes) {
  if (error.syscall !== undefined) return "unreadable (" + (error.code ?? "unknown") + ")";
  if (inflatedBytes === 0 && error.code === "Z_DATA_ERROR") return "not a gzip file: " + error.message;
  return "compressed stream damaged: " + error.message;
}
async function inflateFile(file, path) {
  const gunzip = createGunzip({ chunkSize: ${CHUNK_BYTES} });
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
      const bytes = Buffer.concat(pending, pendingBytes);
      postLines(file, bytes.subarray(0, cut));
      pending = cut < pendingBytes ? [bytes.subarray(cut)] : [];
      pendingBytes -= cut;
    }
  } catch (error) {
    if (error instanceof Closed) throw error;
    damage = damageOf(error, inflatedBytes);
  } finally {
    input.destroy();
  }
  const rest = Buffer.concat(pending, pendingBytes);
  const cut = rest.lastIndexOf(10) + 1;
  if (cut > 0) postLines(file, rest.subarray(0, cut));
  post({ kind: "end", file, truncated: cut < pendingBytes, damage }, []);
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
  // the worker sends each shape once, in the batch that first uses it
  const shapes: (readonly string[])[] = [];
  return {
    next: () => {
      const piece = receive(port1, counters, taken);
      taken += 1;
      Atomics.store(counters, TAKEN, taken);
      Atomics.notify(counters, TAKEN);
      if (piece.kind === "end") return piece;
      for (const shape of piece.shapes) shapes.push(shape);
      return { ...piece, shapes };
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
