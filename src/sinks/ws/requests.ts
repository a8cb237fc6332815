// Handles one client's requests (subscribe, unsubscribe, snapshot, ping): replies, active alerts and `since` replay.
import type { BusEvent } from "../../domain/events.js";
import type { Metrics } from "../../metrics.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import { applySubscribe, applyUnsubscribe, matchesAlert, matchesPrice, viewFilter } from "./filter.js";
import {
  parseClientMessage,
  peekRequestId,
  type ErrorCode,
  type KnownNames,
  type RequestId,
  type SubscribeMessage,
} from "./protocol.js";
import { MAX_SENT_RANGES, changeFilter, planReplay } from "./resume.js";
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
      const journal = { lastSeq: context.source.lastSeq(), oldestSeq: context.source.oldestSeq() };
      const change = changeFilter(session.delivery, result.filter, journal);
      session.delivery = change.state;
      noteForgotten(context, session, change.forgotten);
      // the seq tells the client where the narrower filter took effect (its resume point under it)
      const seq = journal.lastSeq;
      session.reply({ type: "unsubscribed", id: message.id, seq, ...viewFilter(session.filter) });
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
      // the current seq lets a client with a sparse filter advance its resume point (no false gap later)
      session.reply({ type: "pong", id: message.id, seq: context.source.lastSeq() });
      return;
  }
}

/**
 * Update the filter, reply with the firing alerts it matches, then replay `since` — all in this one
 * synchronous call, so no live event (the hub emits synchronously) can slip between replay and live.
 * What to replay is planned from the connection's record of what it was sent (resume.ts).
 */
function subscribe(context: RequestContext, session: Session, message: SubscribeMessage): void {
  const { source, metrics } = context;
  const journal = { lastSeq: source.lastSeq(), oldestSeq: source.oldestSeq() };
  const { lastSeq } = journal;
  if (message.since !== undefined && message.since > lastSeq) {
    const text = `"since" ${message.since} is ahead of the last seq ${lastSeq}`;
    sendError(session, message.id, "bad_request", text);
    return;
  }
  const filter = applySubscribe(session.filter, message);
  const since = message.since;
  const plan =
    since === undefined
      ? null
      : planReplay(session.delivery, { filter, since, journal, replay: source.replay(since) });
  if (plan !== null && !plan.ok) {
    const text =
      `"since" ${since} is older than what this connection can resume exactly (seq ${plan.floorSeq}, ` +
      `after ${MAX_SENT_RANGES} filter changes): reconnect and subscribe with "since" ${since}`;
    sendError(session, message.id, "bad_request", text);
    return;
  }
  const change = plan ?? changeFilter(session.delivery, filter, journal);
  session.delivery = change.state;
  noteForgotten(context, session, change.forgotten);
  const active = filter.channels.has("alerts")
    ? source.activeAlerts().filter((alert) => matchesAlert(filter, alert))
    : [];
  session.reply({ type: "subscribed", id: message.id, seq: lastSeq, ...viewFilter(filter), active });
  if (plan === null) return;
  if (plan.gap !== null) session.reply({ type: "gap", from: plan.gap.from, to: plan.gap.to });
  const sent = { alert: 0, lifecycle: 0 };
  for (const event of plan.events) {
    if (!session.send(context.encodeEvent(event))) break;
    sent[event.type] += 1;
  }
  if (sent.alert > 0) metrics.wsMessagesOut.inc({ type: "alert" }, sent.alert);
  if (sent.lifecycle > 0) metrics.wsMessagesOut.inc({ type: "lifecycle" }, sent.lifecycle);
}

/** Count ranges the record forgot at its limit; warn once per connection (a `since` below them is refused). */
function noteForgotten(context: RequestContext, session: Session, forgotten: number): void {
  if (forgotten === 0) return;
  context.metrics.wsResumeRangesForgotten.inc(forgotten);
  if (!session.warnedForgotten) {
    session.warnedForgotten = true;
    session.logger.warn(
      { maxRanges: MAX_SENT_RANGES, floorSeq: session.delivery.floorSeq },
      "WebSocket client changed its filter too often to resume older events exactly on this connection",
    );
  }
}
