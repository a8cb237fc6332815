// A loopback generic-webhook receiver that verifies signatures, dedupes per docs/webhooks.md and can misbehave on demand.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Signal } from "./wait.js";

/** How the receiver answers: 204, a delayed 204, 429 with Retry-After, or 500. */
export type ReceiverMode =
  | { readonly kind: "ok" }
  | { readonly kind: "slow"; readonly delayMs: number }
  | { readonly kind: "rate_limited"; readonly retryAfterS: number }
  | { readonly kind: "error" };

/** One alert transition as received. */
export interface ReceivedTransition {
  readonly seq: number;
  readonly status: string;
  readonly rule: string;
  readonly deliveryId: string;
}

export interface WebhookReceiver {
  readonly url: string;
  /** Every transition in every request whose body was read and verified (duplicates included). */
  readonly raw: readonly ReceivedTransition[];
  /** Requests by answer: accepted (2xx), refused (429/500), dropped while down is not counted here. */
  readonly counts: { accepted: number; refused: number; slow: number; badSignature: number; groups: number };
  /** When each refused (429/500) request arrived, to check the sender's pacing. */
  readonly refusedAtMs: number[];
  readonly changed: Signal;
  setMode(mode: ReceiverMode): void;
  /** Called with each verified request's transitions before it is answered (e.g. to kill the sender mid-request). */
  onReceive: ((transitions: readonly ReceivedTransition[]) => void) | undefined;
  /** Stop listening and drop every connection: senders get ECONNREFUSED until `up()`. */
  down(): Promise<void>;
  /** Listen again on the same port. */
  up(): Promise<void>;
  /** Distinct transitions by seq + status. */
  uniqueKeys(): ReadonlySet<string>;
  /** Distinct delivery ids. */
  uniqueDeliveries(): number;
  close(): Promise<void>;
}

/** Start a receiver on 127.0.0.1 (port 0 unless given) that checks HMAC-SHA256 with `secret`. */
export async function startWebhookReceiver(secret: string, port = 0): Promise<WebhookReceiver> {
  let mode: ReceiverMode = { kind: "ok" };
  const raw: ReceivedTransition[] = [];
  const counts = { accepted: 0, refused: 0, slow: 0, badSignature: 0, groups: 0 };
  const changed = new Signal();
  const pending = new Set<NodeJS.Timeout>();
  const refusedAtMs: number[] = [];

  let onReceive: WebhookReceiver["onReceive"];
  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    if (mode.kind === "rate_limited") {
      counts.refused += 1;
      refusedAtMs.push(Date.now());
      res.writeHead(429, { "retry-after": String(mode.retryAfterS) }).end();
      return changed.notify();
    }
    if (mode.kind === "error") {
      counts.refused += 1;
      refusedAtMs.push(Date.now());
      res.writeHead(500).end();
      return changed.notify();
    }
    if (!verify(secret, req, body)) {
      counts.badSignature += 1;
      res.writeHead(401).end();
      return changed.notify();
    }
    // The body is processed on receipt (like a real consumer): a sender that times out waiting for
    // the answer will retry, which is exactly the at-least-once duplicate the dedupe key absorbs.
    const deliveryId = headerOf(req, "x-pragma-delivery");
    const parsed = JSON.parse(body) as WebhookBody;
    // a group notification carries the transitions it delivers in `events` (docs/webhooks.md)
    const events = parsed.type === "group" ? (parsed.events ?? []) : [parsed];
    if (parsed.type === "group") counts.groups += 1;
    const transitions: ReceivedTransition[] = [];
    for (const event of events)
      if (event.type === "alert" && event.seq !== undefined && event.alert !== undefined)
        transitions.push({ seq: event.seq, status: event.alert.status, rule: event.alert.rule, deliveryId });
    raw.push(...transitions);
    onReceive?.(transitions);
    const answer = (): void => {
      counts.accepted += 1;
      if (!res.destroyed) res.writeHead(204).end();
      changed.notify();
    };
    if (mode.kind === "slow") {
      counts.slow += 1;
      const timer = setTimeout(() => {
        pending.delete(timer);
        answer();
      }, mode.delayMs);
      pending.add(timer);
      changed.notify();
    } else answer();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  server.keepAliveTimeout = 1_000;
  const listen = (onPort: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(onPort, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const boundPort = await listen(port);
  const stopListening = (): Promise<void> =>
    new Promise((resolve) => {
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });

  return {
    get onReceive() {
      return onReceive;
    },
    set onReceive(hook) {
      onReceive = hook;
    },
    url: `http://127.0.0.1:${boundPort}/hook`,
    raw,
    counts,
    refusedAtMs,
    changed,
    setMode(next) {
      mode = next;
    },
    down: stopListening,
    async up() {
      await listen(boundPort);
    },
    uniqueKeys: () => new Set(raw.map((t) => `${t.seq}:${t.status}`)),
    uniqueDeliveries: () => new Set(raw.map((t) => t.deliveryId)).size,
    close: stopListening,
  };
}

interface WebhookEvent {
  readonly type: string;
  readonly seq?: number;
  readonly alert?: { readonly status: string; readonly rule: string };
}
type WebhookBody = WebhookEvent & { readonly events?: readonly WebhookEvent[] };

function headerOf(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

/** docs/webhooks.md verification: HMAC-SHA256 of `<timestamp>.<raw body>`, constant-time compare, 5-minute window. */
function verify(secret: string, req: IncomingMessage, body: string): boolean {
  const timestamp = headerOf(req, "x-pragma-timestamp");
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(
    `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`,
  );
  const presented = Buffer.from(headerOf(req, "x-signature-256"));
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
