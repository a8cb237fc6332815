// Child process of the WebSocket benches: N clients on one URL; counts frames, samples delivery latency from an embedded `sentAt`.
//
// Two readers: "ws" (the `ws` library client, default) and "socket" (a minimal RFC 6455 reader on `net` sockets with a
// shared read buffer). With 1 000 clients in one process, one event reaches 1 000 sockets at once and they are read one
// after another: with the `ws` client, each socket's parser, events and string copy run before its timestamp, so the
// last sockets are timed late by the clients' own backlog. The socket reader stamps the time as its read callback
// starts and parses frame headers in place (payloads are copied only on sampled clients), so the latency it reports
// is close to when the frame reached the socket.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import WebSocket from "ws";
import { exitWithParent } from "./lib/child.js";

/** A phase request from the parent: expect `expect` frames per client carrying `"sentAt":`. */
export interface PhaseRequest {
  readonly phase: string;
  readonly expect: number;
  readonly timeoutMs: number;
}

/** What a phase reports: frames received, when the last arrived, sampled latencies, clients closed, own CPU. */
export interface PhaseReport {
  readonly received: number;
  readonly lastAtMs: number;
  readonly latenciesMs: readonly number[];
  readonly closed: number;
  /** CPU time (user + system) this process used during the phase. */
  readonly cpuMs: number;
  /** Wall time of the phase. */
  readonly wallMs: number;
  /** Event-loop utilisation of this process during the phase (0..1); near 1 = the clients are the bottleneck. */
  readonly elu: number;
  /** Time the main thread waited, runnable, for a CPU during the phase (Linux schedstat; NaN elsewhere). */
  readonly runQueueWaitMs: number;
}

/** Run-queue wait of this process's main thread so far, in ms (`/proc/self/schedstat`, field 2); NaN if unavailable. */
function runQueueWaitMs(): number {
  try {
    return Number(readFileSync("/proc/self/schedstat", "latin1").split(" ")[1]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

const [url = "", countText = "1000", subscribe = "subscribe", sampleEvery = "10", reader = "ws"] =
  process.argv.slice(2);
const count = Number(countText);
const nowMs = (): number => performance.timeOrigin + performance.now();
const closers: (() => void)[] = [];
let received = 0;
let lastAtMs = 0;
let closed = 0;
let latencies: number[] = [];
let onFrame: () => void = () => undefined;
exitWithParent(() => {
  for (const close of closers) close();
});

const SUBSCRIBE = JSON.stringify({ op: "subscribe", id: "1", channels: ["alerts"] });

/** Connect one `ws` library client; resolves once it can receive events (after `subscribed` for the product server). */
function connectWs(index: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    closers.push(() => socket.terminate());
    const sampled = index % Number(sampleEvery) === 0;
    socket.once("error", reject);
    socket.on("close", () => closed++);
    socket.on("open", () => {
      if (subscribe !== "subscribe") return resolve();
      socket.send(SUBSCRIBE);
    });
    socket.on("message", (data: Buffer) => {
      const at = nowMs();
      const text = data.toString("latin1");
      const mark = text.indexOf('"sentAt":');
      if (mark < 0) {
        if (text.includes('"subscribed"')) resolve();
        return;
      }
      received++;
      lastAtMs = at;
      if (sampled) latencies.push(at - Number.parseFloat(text.slice(mark + 9, mark + 40)));
      onFrame();
    });
  });
}

/** Shared by every raw socket: `net` reads into it and the callback parses it before the next read. */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);
const SENT_AT = Buffer.from('"sentAt":', "latin1");

/** A client-to-server frame (masked, RFC 6455 §5.3), payload ≤ 125 bytes. */
function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const frame = Buffer.allocUnsafe(6 + payload.length);
  frame[0] = 0x80 | opcode;
  frame[1] = 0x80 | payload.length;
  mask.copy(frame, 2);
  for (let i = 0; i < payload.length; i++) frame[6 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

/** Connect one minimal RFC 6455 client on a raw socket; resolves like `connectWs`. */
function connectSocket(index: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const sampled = index % Number(sampleEvery) === 0;
    let upgraded = false;
    let ready = subscribe !== "subscribe";
    let handshake = Buffer.alloc(0);
    // frame parser state: header bytes gathered, then payload bytes left in the current frame
    const header = Buffer.alloc(14);
    let headerLength = 0;
    let inFrame = false;
    let opcode = 0;
    let remaining = 0;
    let keep = false;
    let payload: Buffer[] = [];

    const finishFrame = (at: number): void => {
      inFrame = false;
      headerLength = 0;
      const body = keep ? Buffer.concat(payload) : null;
      payload = [];
      if (opcode === 0x9) return void socket.write(maskedFrame(0xa, body ?? Buffer.alloc(0)));
      if (opcode === 0x8) return void socket.end();
      if (opcode !== 0x1 && opcode !== 0x0) return;
      if (!ready) {
        if (body !== null && body.includes('"subscribed"', 0, "latin1")) {
          ready = true;
          resolve();
        }
        return;
      }
      received++;
      lastAtMs = at;
      if (body !== null) {
        const mark = body.indexOf(SENT_AT);
        if (mark >= 0) latencies.push(at - Number.parseFloat(body.toString("latin1", mark + 9, mark + 40)));
      }
      onFrame();
    };

    const startFrame = (at: number): void => {
      opcode = header[0]! & 0x0f;
      const length7 = header[1]! & 0x7f;
      remaining =
        length7 === 126
          ? header.readUInt16BE(2)
          : length7 === 127
            ? Number(header.readBigUInt64BE(2))
            : length7;
      keep = sampled || !ready || opcode >= 0x8;
      inFrame = true;
      if (remaining === 0) finishFrame(at);
    };

    const feed = (data: Buffer, start: number, end: number, at: number): void => {
      let pos = start;
      while (pos < end) {
        if (!inFrame) {
          header[headerLength++] = data[pos++]!;
          if (headerLength < 2) continue;
          const length7 = header[1]! & 0x7f;
          const need = length7 === 126 ? 4 : length7 === 127 ? 10 : 2;
          if (headerLength < need) continue;
          startFrame(at);
          continue;
        }
        const take = Math.min(remaining, end - pos);
        if (keep) payload.push(Buffer.from(data.subarray(pos, pos + take)));
        pos += take;
        remaining -= take;
        if (remaining === 0) finishFrame(at);
      }
    };

    const socket: Socket = netConnect({
      host: target.hostname,
      port: Number(target.port),
      noDelay: true,
      onread: {
        buffer: READ_BUFFER,
        callback: (bytes: number, data: Uint8Array): boolean => {
          const at = nowMs();
          const chunk = data as Buffer;
          if (upgraded) {
            feed(chunk, 0, bytes, at);
            return true;
          }
          handshake = Buffer.concat([handshake, chunk.subarray(0, bytes)]);
          const end = handshake.indexOf("\r\n\r\n");
          if (end < 0) return true;
          if (!handshake.subarray(0, 16).toString("latin1").includes(" 101")) {
            reject(new Error(`upgrade refused: ${handshake.subarray(0, 40).toString("latin1")}`));
            socket.destroy();
            return false;
          }
          upgraded = true;
          const rest = handshake.subarray(end + 4);
          if (subscribe === "subscribe") socket.write(maskedFrame(0x1, Buffer.from(SUBSCRIBE)));
          else resolve();
          feed(rest, 0, rest.length, at);
          return true;
        },
      },
    });
    closers.push(() => socket.destroy());
    socket.once("error", reject);
    socket.on("close", () => closed++);
    socket.on("connect", () => {
      socket.write(
        `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
          `Sec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
  });
}

const connect = reader === "socket" ? connectSocket : connectWs;
for (let i = 0; i < count; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => connect(i + k)));
}
process.on("message", (message: PhaseRequest | string) => {
  if (typeof message === "string") return;
  received = 0;
  latencies = [];
  const target = message.expect * count;
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  const eluStart = performance.eventLoopUtilization();
  const waitStart = runQueueWaitMs();
  const finish = (): void => {
    clearTimeout(timer);
    onFrame = () => undefined;
    const cpu = process.cpuUsage(cpuStart);
    const report: PhaseReport = {
      received,
      lastAtMs,
      latenciesMs: latencies,
      closed,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs: performance.now() - wallStart,
      elu: performance.eventLoopUtilization(eluStart).utilization,
      runQueueWaitMs: runQueueWaitMs() - waitStart,
    };
    process.send?.(report);
  };
  const timer = setTimeout(finish, message.timeoutMs);
  onFrame = () => {
    if (received >= target) finish();
  };
});
process.send?.({ ready: closers.length });
