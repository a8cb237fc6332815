// An in-process generic-webhook receiver on 127.0.0.1 that verifies signatures as docs/webhooks.md tells users to.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { AlertEvent } from "../../src/domain/events.js";
import { createFeed, type Feed } from "./feed.js";

/** One request the daemon made, with what we answered. */
export interface Delivery {
  readonly answeredStatus: number;
  readonly deliveryId: string;
  /** Signature and timestamp checked per docs/webhooks.md (HMAC of `<timestamp>.<raw body>`, ±5 min). */
  readonly verified: boolean;
  readonly event: AlertEvent | undefined;
  readonly rawBody: string;
  /** When the request arrived (ms since epoch). */
  readonly atMs: number;
}

/** A running receiver; `status` is what the next requests are answered with. */
export interface WebhookReceiver {
  readonly url: string;
  readonly deliveries: Feed<Delivery>;
  status: number;
  /** A `Retry-After` header sent with 429 and 503 answers (none when undefined). */
  retryAfter: string | undefined;
  close(): Promise<void>;
}

/** The documented verification: constant-time compare of `sha256=<hex HMAC(secret, "<ts>.<raw body>")>`. */
export function verifySignature(
  secret: string,
  headers: IncomingHttpHeaders,
  rawBody: string,
  nowS: number,
): boolean {
  const timestamp = String(headers["x-pragma-timestamp"] ?? "");
  const signature = String(headers["x-signature-256"] ?? "");
  if (!/^\d+$/.test(timestamp) || Math.abs(nowS - Number(timestamp)) > 300) return false;
  const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex")}`;
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function alertEventOf(rawBody: string): AlertEvent | undefined {
  try {
    const value = JSON.parse(rawBody) as { type?: unknown };
    return value.type === "alert" ? (value as AlertEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** Listen on 127.0.0.1:0 and record every POST. */
export async function startWebhookReceiver(secret: string, initialStatus: number): Promise<WebhookReceiver> {
  const deliveries = createFeed<Delivery>((recent) =>
    JSON.stringify(recent.map((d) => [d.answeredStatus, d.event?.alert.status, d.deliveryId])),
  );
  const receiver: { status: number; retryAfter: string | undefined } = {
    status: initialStatus,
    retryAfter: undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const answeredStatus = receiver.status;
      deliveries.push({
        answeredStatus,
        deliveryId: String(req.headers["x-pragma-delivery"] ?? ""),
        verified: verifySignature(secret, req.headers, rawBody, Math.floor(Date.now() / 1000)),
        event: alertEventOf(rawBody),
        rawBody,
        atMs: Date.now(),
      });
      const retryAfter =
        receiver.retryAfter !== undefined && (answeredStatus === 429 || answeredStatus === 503)
          ? { "retry-after": receiver.retryAfter }
          : {};
      res.writeHead(answeredStatus, { connection: "close", ...retryAfter }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    get status() {
      return receiver.status;
    },
    set status(next: number) {
      receiver.status = next;
    },
    get retryAfter() {
      return receiver.retryAfter;
    },
    set retryAfter(next: string | undefined) {
      receiver.retryAfter = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Accepted (2xx) deliveries of one alert fingerprint and status. */
export function accepted(deliveries: readonly Delivery[], fingerprint: string, status: string): Delivery[] {
  return deliveries.filter(
    (d) =>
      d.answeredStatus < 300 && d.event?.alert.fingerprint === fingerprint && d.event.alert.status === status,
  );
}
