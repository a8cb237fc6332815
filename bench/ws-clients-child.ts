// Child process of the WebSocket benches: N clients on one URL; counts frames, samples delivery latency from an embedded `sentAt`.
import WebSocket from "ws";
import { exitWithParent } from "./lib/child.js";

/** A phase request from the parent: expect `expect` frames per client carrying `"sentAt":`. */
export interface PhaseRequest {
  readonly phase: string;
  readonly expect: number;
  readonly timeoutMs: number;
}

/** What a phase reports: frames received in total, when the last arrived, sampled latencies, clients closed. */
export interface PhaseReport {
  readonly received: number;
  readonly lastAtMs: number;
  readonly latenciesMs: readonly number[];
  readonly closed: number;
}

const [url = "", countText = "1000", subscribe = "subscribe", sampleEvery = "10"] = process.argv.slice(2);
const count = Number(countText);
const nowMs = (): number => performance.timeOrigin + performance.now();
const sockets: WebSocket[] = [];
let received = 0;
let lastAtMs = 0;
let closed = 0;
let latencies: number[] = [];
let onFrame: () => void = () => undefined;
exitWithParent(() => {
  for (const socket of sockets) socket.terminate();
});

/** Connect one client; resolves once it can receive events (after `subscribed` for the product server). */
function connect(index: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    sockets.push(socket);
    const sampled = index % Number(sampleEvery) === 0;
    socket.once("error", reject);
    socket.on("close", () => closed++);
    socket.on("open", () => {
      if (subscribe !== "subscribe") return resolve();
      socket.send(JSON.stringify({ op: "subscribe", id: "1", channels: ["alerts"] }));
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

for (let i = 0; i < count; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => connect(i + k)));
}
process.on("message", (message: PhaseRequest | string) => {
  if (typeof message === "string") return;
  received = 0;
  latencies = [];
  const target = message.expect * count;
  const finish = (): void => {
    clearTimeout(timer);
    onFrame = () => undefined;
    const report: PhaseReport = { received, lastAtMs, latenciesMs: latencies, closed };
    process.send?.(report);
  };
  const timer = setTimeout(finish, message.timeoutMs);
  onFrame = () => {
    if (received >= target) finish();
  };
});
process.send?.({ ready: sockets.length });
