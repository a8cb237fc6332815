// The cluster's event log on a JetStream stream: members publish their events (de-duplicated by message id, fenced
// by the lease) and every member reads the stream back in order into its own hub, so all serve one seq.
import { hostname } from "node:os";
import {
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import { filter } from "rxjs";
import type { ClusterConfig } from "../config/types.js";
import type { EventHub, EventSource } from "../pipeline/event-hub.js";
import { createJournal, type Journal, type UnnumberedEvent } from "../state/journal.js";
import { natsConnectOptions } from "./nats-connect.js";
import { eventOfMessage, isFromOrigin, messageId, startSeq } from "./journal-log.js";

/** The stream holding the cluster's events, and the one subject they are published on. */
export const EVENTS_STREAM = "pm_events";
export const EVENTS_SUBJECT = "pm.events";
/** How long the server remembers a message id (a retried publish within it is dropped as a duplicate). */
const DUPLICATE_WINDOW_MS = 120_000;
/** Wait between retries of a failed publish, a failed connect, or a consumer that ended. */
const RETRY_MS = 500;
const PUBLISH_TIMEOUT_MS = 2_000;
/** How often `readThrough` looks whether the consumer reached the stream's end. */
const READ_THROUGH_POLL_MS = 20;

/** What the cluster journal needs from the daemon. */
export interface ClusterJournalDeps {
  readonly config: ClusterConfig;
  /** Events held for `since` replay (`server.journalSize`), and the stream's limit. */
  readonly capacity: number;
  /** Whether this member holds a valid lease now: alerts published without one are dropped (the fence). */
  readonly fence: () => boolean;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly random: () => number;
}

/** The cluster's journal as one member sees it. */
export interface ClusterJournal {
  /** The journal the hub serves from, filled from the stream in stream order (its seq is the stream seq). */
  readonly journal: Journal;
  /** The hub's `forward`: queue an event for the stream (alerts dropped while fenced). */
  forward(event: UnnumberedEvent): void;
  /** Whether events this member queued are not yet taken by the stream. */
  unpublished(): boolean;
  /**
   * Resolves true once this member has read the stream up to where it ended when asked (so its journal holds
   * every event published before), false when it cannot tell (NATS away) or that takes longer than `waitMs`.
   */
  readThrough(waitMs: number): Promise<boolean>;
  /** `source` with only the journaled events this process published (what its own sinks notify, as before). */
  own(source: EventSource): EventSource;
  /** Connect, create the stream if needed, publish what is queued and feed the stream into `hub`. */
  start(hub: EventHub): void;
  /** Publish what is still queued (waiting at most `flushMs`), then stop reading and close the connection. */
  stop(flushMs: number): Promise<void>;
}

/** The cluster journal when `cluster.nats.servers` is set, else undefined (the single daemon keeps its file journal). */
export function createClusterJournal(deps: ClusterJournalDeps): ClusterJournal | undefined {
  if (deps.config.nats.servers.length === 0) return undefined;
  const incarnation = Math.floor(deps.random() * 2 ** 32).toString(16);
  const origin = `${deps.config.memberId === "" ? hostname() : deps.config.memberId}/${incarnation}`;
  const dropped = new Counter({
    name: "pragma_monitor_cluster_journal_dropped_total",
    help: "Events this member did not publish to the cluster's log: fenced (no valid lease) or overflow (queue full while NATS was away).",
    labelNames: ["reason"],
    registers: [deps.registry],
  });
  const journal = createJournal(deps.capacity);
  const ownSeqs = new Set<number>();
  const publisher = createPublisher(deps, origin, (reason) => dropped.inc({ reason }));
  let stopped = false;
  let connection: NatsConnection | undefined;
  let messages: ConsumerMessages | undefined;
  let manager: JetStreamManager | undefined;
  /** The last stream seq read, malformed events included (the journal's lastSeq skips those). */
  let readSeq = 0;
  const readUpTo = (): number => Math.max(readSeq, journal.lastSeq);
  const deliver = (hub: EventHub, msg: JsMsg): void => {
    readSeq = Math.max(readSeq, msg.seq);
    if (msg.seq <= journal.lastSeq) return;
    const event = eventOfMessage(msg.string(), msg.seq);
    if (event === undefined) {
      deps.logger.warn({ seq: msg.seq }, "cluster journal: malformed event in the stream skipped");
      return;
    }
    if (isFromOrigin(msg.headers?.get("Nats-Msg-Id"), origin)) ownSeqs.add(msg.seq);
    // insertion order is seq order: the first is the oldest
    if (ownSeqs.size > deps.capacity) ownSeqs.delete(ownSeqs.values().next().value as number);
    hub.deliver(event);
  };
  const run = async (hub: EventHub): Promise<void> => {
    const nc = await connectUntilStopped(deps, origin, () => stopped);
    if (nc === undefined) return;
    connection = nc;
    const jsm = await retryUntilStopped(
      deps.logger,
      () => ensureStream(nc, deps),
      () => stopped,
    );
    if (jsm === undefined) return;
    manager = jsm;
    publisher.attach(jetstream(nc));
    while (!stopped) {
      try {
        const from = journal.lastSeq > 0 ? journal.lastSeq + 1 : await firstSeqToRead(jsm, deps.capacity);
        const consumer = await jetstream(nc).consumers.get(EVENTS_STREAM, {
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: from,
        });
        messages = await consumer.consume();
        for await (const msg of messages) deliver(hub, msg);
      } catch (error) {
        if (!stopped)
          deps.logger.warn({ err: error }, "cluster journal: reading the stream failed, retrying");
      }
      if (!stopped) await sleep(RETRY_MS);
    }
  };
  return {
    journal,
    forward: (event) => publisher.enqueue(event),
    unpublished: () => publisher.queued() > 0,
    readThrough: (waitMs) => readThrough(manager, readUpTo, () => stopped, waitMs),
    own: (source) => ownEvents(source, ownSeqs),
    start(hub) {
      run(hub).catch((error: unknown) => deps.logger.error({ err: error }, "cluster journal stopped"));
    },
    async stop(flushMs) {
      await publisher.flush(flushMs, () => journal.lastSeq);
      stopped = true;
      publisher.close();
      await messages?.close();
      await connection?.close();
    },
  };
}

/** True once `read()` reaches the stream's last seq as of the call; false without NATS, when stopped, or after `waitMs`. */
async function readThrough(
  manager: JetStreamManager | undefined,
  read: () => number,
  stopped: () => boolean,
  waitMs: number,
): Promise<boolean> {
  if (manager === undefined) return false;
  const deadlineMs = Date.now() + waitMs;
  const endSeq = await manager.streams.info(EVENTS_STREAM).then(
    (info) => info.state.last_seq,
    () => undefined,
  );
  if (endSeq === undefined) return false;
  while (read() < endSeq) {
    if (stopped() || Date.now() > deadlineMs) return false;
    await sleep(READ_THROUGH_POLL_MS);
  }
  return true;
}

/** `source` whose live journaled events are only those of `ownSeqs` (price ticks pass). */
function ownEvents(source: EventSource, ownSeqs: ReadonlySet<number>): EventSource {
  const view: EventSource = Object.create(source) as EventSource;
  const events$ = source.events$.pipe(filter((event) => event.type === "price" || ownSeqs.has(event.seq)));
  return Object.assign(view, { events$ });
}

/** The ordered queue of this member's events on their way to the stream, one publish in flight at a time. */
interface Publisher {
  enqueue(event: UnnumberedEvent): void;
  /** Events queued or in flight (one leaves the queue once the stream acknowledged it). */
  queued(): number;
  attach(js: JetStreamClient): void;
  /** Resolves once the queue is empty and `deliveredSeq` reached the last acknowledged publish, or after `waitMs`. */
  flush(waitMs: number, deliveredSeq: () => number): Promise<void>;
  close(): void;
}

function createPublisher(
  deps: ClusterJournalDeps,
  origin: string,
  onDropped: (reason: "fenced" | "overflow") => void,
): Publisher {
  const queue: { readonly id: string; readonly event: UnnumberedEvent }[] = [];
  let count = 0;
  let js: JetStreamClient | undefined;
  let pumping = false;
  let closed = false;
  let failing = false;
  let ackedSeq = 0;
  const fenced = (event: UnnumberedEvent): boolean => event.type === "alert" && !deps.fence();
  const pump = async (): Promise<void> => {
    if (pumping || js === undefined) return;
    pumping = true;
    while (queue.length > 0 && !closed) {
      const item = queue[0] as (typeof queue)[number];
      // re-checked at every attempt: a lease lost while NATS was away fences what is still queued
      if (fenced(item.event)) {
        queue.shift();
        onDropped("fenced");
        continue;
      }
      try {
        const ack = await js.publish(EVENTS_SUBJECT, JSON.stringify(item.event), {
          msgID: item.id,
          timeout: PUBLISH_TIMEOUT_MS,
        });
        ackedSeq = Math.max(ackedSeq, ack.seq);
        queue.shift();
        if (failing) deps.logger.info("cluster journal: publishing again");
        failing = false;
      } catch (error) {
        if (!failing) deps.logger.error({ err: error }, "cluster journal: publish failed, retrying");
        failing = true;
        await sleep(RETRY_MS);
      }
    }
    pumping = false;
  };
  return {
    enqueue(event) {
      if (fenced(event)) return onDropped("fenced");
      count += 1;
      queue.push({ id: messageId(origin, count, event), event });
      if (queue.length > deps.capacity) {
        queue.shift();
        onDropped("overflow");
      }
      void pump();
    },
    queued: () => queue.length,
    attach(client) {
      js = client;
      void pump();
    },
    async flush(waitMs, deliveredSeq) {
      const deadlineMs = Date.now() + waitMs;
      const pending = (): boolean => queue.length > 0 || pumping || deliveredSeq() < ackedSeq;
      while (pending() && js !== undefined && Date.now() < deadlineMs) await sleep(20);
    },
    close() {
      closed = true;
    },
  };
}

/** Create the events stream (file storage, the configured replicas, the duplicate window), or use the existing one. */
async function ensureStream(nc: NatsConnection, deps: ClusterJournalDeps): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc, { timeout: PUBLISH_TIMEOUT_MS });
  try {
    await jsm.streams.info(EVENTS_STREAM);
  } catch {
    await jsm.streams.add({
      name: EVENTS_STREAM,
      subjects: [EVENTS_SUBJECT],
      storage: StorageType.File,
      num_replicas: deps.config.nats.replicas,
      duplicate_window: DUPLICATE_WINDOW_MS * 1_000_000,
      max_msgs: deps.capacity,
      discard: DiscardPolicy.Old,
    });
  }
  return jsm;
}

/** Where a member with nothing read yet starts: the last `capacity` events of the stream. */
async function firstSeqToRead(jsm: JetStreamManager, capacity: number): Promise<number> {
  const { state } = await jsm.streams.info(EVENTS_STREAM);
  return startSeq({ firstSeq: state.first_seq, lastSeq: state.last_seq }, capacity);
}

/** A NATS connection (which then reconnects by itself), retried until it opens or the journal stops. */
function connectUntilStopped(
  deps: ClusterJournalDeps,
  origin: string,
  stopped: () => boolean,
): Promise<NatsConnection | undefined> {
  const { nats } = deps.config;
  return retryUntilStopped(
    deps.logger,
    () => connect(natsConnectOptions(nats, `${origin} journal`, PUBLISH_TIMEOUT_MS)),
    stopped,
  );
}

/** `attempt` until it succeeds (undefined once `stopped`), logging the first failure of the streak. */
async function retryUntilStopped<T>(
  logger: Logger,
  attempt: () => Promise<T>,
  stopped: () => boolean,
): Promise<T | undefined> {
  let logged = false;
  while (!stopped()) {
    try {
      return await attempt();
    } catch (error) {
      if (!logged) logger.error({ err: error }, "cluster journal: NATS not reachable, retrying");
      logged = true;
      await sleep(RETRY_MS);
    }
  }
  return undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
