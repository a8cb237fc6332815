// Handles one client's requests (subscribe, unsubscribe, snapshot, ping): replies, active alerts and `since` replay.
import type { BusEvent } from "../../domain/events.js";
import type { Metrics } from "../../metrics.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import {
  applySubscribe,
  applyUnsubscribe,
  matchesAlert,
  matchesEvent,
  matchesPrice,
  viewFilter,
} from "./filter.js";
import {
  parseClientMessage,
  peekRequestId,
  type ErrorCode,
  type KnownNames,
  type RequestId,
  type SubscribeMessage,
} from "./protocol.js";
import { CLOSE_POLICY_VIOLATION, type Session } from "./session.js";

export interface RequestContext {
  readonly source: EventSource;
  readonly metrics: Metrics;
  readonly known: () => KnownNames;
  readonly encodeEvent: (event: BusEvent) => Buffer;
  readonly nowMs: () => number;
}

/** Reply with an error frame; the connection stays open. */
export function sendError(session: Session, id: RequestId, code: ErrorCode, message: string): void {
  session.reply({ type: "error", id, code, message });
}

/** Handle one incoming frame: rate limit, parse, dispatch. Never throws on client input. */
export function handleMessage(
  context: RequestContext,
  session: Session,
  data: Buffer,
  isBinary: boolean,
): void {
  const { metrics } = context;
  if (session.closing) return;
  const verdict = session.limiter.take(context.nowMs());
  if (verdict !== "ok") {
    metrics.wsMessagesIn.inc({ op: "rate_limited" });
    metrics.wsRejected.inc({ reason: verdict === "flood" ? "flood" : "rate_limited" });
    if (verdict === "flood") {
      session.logger.warn("closing flooding WebSocket client");
      session.close(CLOSE_POLICY_VIOLATION, "message flood");
    } else {
      // the message is not handled, but its reply still carries its id (binary frames have none)
      const id = isBinary ? null : peekRequestId(data.toString("utf8"));
      sendError(session, id, "rate_limited", "too many messages: slow down");
    }
    return;
  }
  if (isBinary) {
    metrics.wsMessagesIn.inc({ op: "binary" });
    sendError(session, null, "bad_request", "binary frames are not supported: send JSON text frames");
    return;
  }
  const parsed = parseClientMessage(data.toString("utf8"), context.known());
  if (!parsed.ok) {
    metrics.wsMessagesIn.inc({ op: parsed.op });
    sendError(session, parsed.id, parsed.code, parsed.message);
    return;
  }
  const message = parsed.message;
  metrics.wsMessagesIn.inc({ op: message.op });
  switch (message.op) {
    case "subscribe":
      subscribe(context, session, message);
      return;
    case "unsubscribe": {
      const result = applyUnsubscribe(session.filter, message);
      if (!result.ok) {
        sendError(session, message.id, "bad_request", result.message);
        return;
      }
      session.filter = result.filter;
      session.reply({ type: "unsubscribed", id: message.id, ...viewFilter(session.filter) });
      return;
    }
    case "snapshot": {
      const { source } = context;
      session.reply({
        type: "snapshot",
        id: message.id,
        seq: source.lastSeq(),
        active: source.activeAlerts().filter((alert) => matchesAlert(session.filter, alert)),
        prices: source.latestPrices().filter((tick) => matchesPrice(session.filter, tick)),
      });
      return;
    }
    case "ping":
      session.reply({ type: "pong", id: message.id });
      return;
  }
}

/**
 * Update the filter, reply with the firing alerts it matches, then replay `since` — all in this one
 * synchronous call, so no live event (the hub emits synchronously) can slip between replay and live.
 */
function subscribe(context: RequestContext, session: Session, message: SubscribeMessage): void {
  const { source, metrics } = context;
  const lastSeq = source.lastSeq();
  if (message.since !== undefined && message.since > lastSeq) {
    const text = `"since" ${message.since} is ahead of the last seq ${lastSeq}`;
    sendError(session, message.id, "bad_request", text);
    return;
  }
  const previous = session.filter;
  session.filter = applySubscribe(previous, message);
  const active = session.filter.channels.has("alerts")
    ? source.activeAlerts().filter((alert) => matchesAlert(session.filter, alert))
    : [];
  session.reply({ type: "subscribed", id: message.id, seq: lastSeq, ...viewFilter(session.filter), active });
  // live delivery is continuous from here on; a replay only reaches further back
  const coveredFrom = session.coveredFromSeq ?? lastSeq;
  session.coveredFromSeq = Math.min(coveredFrom, message.since ?? lastSeq);
  if (message.since === undefined) return;
  const replay = source.replay(message.since);
  if (replay.gap !== null) session.reply({ type: "gap", from: replay.gap.from, to: replay.gap.to });
  const deliveredUpTo = session.lastSeq;
  const sent = { alert: 0, lifecycle: 0 };
  for (const event of replay.events) {
    // skip what this connection already received live under its previous filter
    if (event.seq > coveredFrom && event.seq <= deliveredUpTo && matchesEvent(previous, event)) continue;
    if (!matchesEvent(session.filter, event)) continue;
    if (!session.send(context.encodeEvent(event))) return;
    sent[event.type] += 1;
  }
  if (sent.alert > 0) metrics.wsMessagesOut.inc({ type: "alert" }, sent.alert);
  if (sent.lifecycle > 0) metrics.wsMessagesOut.inc({ type: "lifecycle" }, sent.lifecycle);
  session.lastSeq = Math.max(deliveredUpTo, lastSeq);
}
