// What the price-move cluster suites share: a price raised by 10 % at a proxy, and what a member polled and published.
import type { AlertPayload } from "../../src/domain/events.js";
import type { RunningDaemon } from "../e2e/daemon.js";
import type { CountingProxy } from "./proxy.js";

/** A pair price body with its price 10 % higher (the move the new owner sees). */
export function risen(_pair: string, body: Buffer): Buffer {
  const price = JSON.parse(body.toString("utf8")) as { price?: unknown };
  if (typeof price.price !== "string") return body;
  price.price = `0x${((BigInt(price.price) * 11n) / 10n).toString(16)}`;
  return Buffer.from(JSON.stringify(price));
}

/** The price_change alerts a member published for `pair`, as `status/reason` (its stdout sink logs exactly those). */
export function priceChanges(member: { readonly daemon: RunningDaemon }, pair: string): string[] {
  return member.daemon.logs.items.flatMap((line) => {
    const alert = line["event"] === "alert" ? (line["alert"] as AlertPayload | undefined) : undefined;
    return alert?.rule === "price_change" && alert.labels["pair"] === pair
      ? [`${alert.status}/${alert.reason}`]
      : [];
  });
}

/** Whether `member` polled `pair` at least `count` times since `sinceMs`. */
export function polled(
  member: { readonly proxy: CountingProxy },
  pair: string,
  sinceMs: number,
  count: number,
): boolean {
  return member.proxy.requests.filter((r) => r.pair === pair && r.atMs >= sinceMs).length >= count;
}
