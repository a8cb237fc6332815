// WebSocket abuse against the real server: fuzzed frames, garbage, floods, oversize, churn, stalls; a good client misses nothing.
import fc from "fast-check";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import type { AlertPayload, JournaledEvent, Severity } from "../../src/domain/events.js";
import { SEED, budget, randomInt, seededRandom } from "./support/mode.js";
import { reportSuite } from "./support/report.js";
import {
  WS_PAIRS,
  WS_RULES,
  connectClient,
  pollUntil,
  rawUpgrade,
  startWsHarness,
  type Frame,
  type RecordingClient,
  type WsHarness,
} from "./support/ws-server.js";
import { Signal } from "./support/wait.js";

const CONFIG: ServerConfig = {
  host: "127.0.0.1",
  port: 0,
  externalUrl: "",
  token: "",
  allowedHosts: [],
  allowedOrigins: [],
  metricsToken: "",
  heartbeatMs: 30_000,
  maxClients: 100,
  maxConnections: 10_000,
  maxMessageBytes: 64 * 1024,
  messagesPerSecond: 200,
  maxBufferedBytes: 1024 * 1024,
  journalSize: 2_000,
};
const PROPERTY_RUNS = budget(60, 300);
const GARBAGE_CONNECTIONS = budget(60, 300);
const FLOODERS = budget(2, 6);
const OVERSIZE = budget(3, 10);
const CYCLES = budget(2_000, 10_000);
const CYCLE_CONCURRENCY = 20;
const STALLED = budget(1, 3);
const RESUBSCRIBES = budget(150, 600);
/** Events the publisher may have ahead of the good client (keeps the good client under its buffer limit). */
const WINDOW = 64;
const EVENT_TYPES = new Set(["hello", "alert", "price", "lifecycle", "gap", "heartbeat"]);
const REPLY_FOR: Readonly<Record<string, string>> = {
  subscribe: "subscribed",
  unsubscribe: "unsubscribed",
  snapshot: "snapshot",
  ping: "pong",
};
const ERROR_CODES = new Set(["bad_request", "unknown_op", "rate_limited"]);

/** The well-behaved subscriber: keeps only what it needs to prove nothing was lost or reordered. */
class GoodClient {
  readonly seqs: number[] = [];
  ticks = 0;
  outOfOrder = 0;
  subscribed = false;
  readonly changed = new Signal();
  constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as Frame;
      if (frame.type === "subscribed") this.subscribed = true;
      else if (frame.type === "price") this.ticks += 1;
      else if (typeof frame["seq"] === "number" && (frame.type === "alert" || frame.type === "lifecycle")) {
        const seq = frame["seq"];
        if (seq <= (this.seqs.at(-1) ?? 0)) this.outOfOrder += 1;
        this.seqs.push(seq);
      }
      this.changed.notify();
    });
  }
  get lastSeq(): number {
    return this.seqs.at(-1) ?? 0;
  }
}

/** Publishes alerts and price ticks continuously, never more than WINDOW events ahead of the good client. */
class Publisher {
  alerts = 0;
  ticks = 0;
  padBytes = 200;
  /** Publish as fast as the good client reads (to fill a stalled reader's buffers), else one batch per 5 ms. */
  burst = false;
  #stopped = false;
  #loop: Promise<void> | undefined;
  constructor(
    private readonly harness: WsHarness,
    private readonly good: GoodClient,
  ) {}
  start(): void {
    this.#loop = this.#run();
  }
  async #run(): Promise<void> {
    while (!this.#stopped) {
      for (let i = 0; i < 4; i++) this.publishAlert();
      this.harness.hub.publishPrice("offchain:BTC/USD", () => ({
        pair: "BTC/USD",
        market: "offchain",
        target: "offchain:BTC/USD",
        price: String(80_000 + (this.ticks % 100)),
        numSources: 5,
        timestamp: new Date().toISOString(),
        observedAt: new Date().toISOString(),
      }));
      this.ticks += 1;
      const target = this.harness.hub.lastSeq() - WINDOW;
      await this.good.changed.until(() => this.good.lastSeq >= target, "the good client to keep up", 30_000);
      // background load, not a wait for a condition: pace the producer outside bursts
      await new Promise((resolve) => (this.burst ? setImmediate(resolve) : setTimeout(resolve, 5)));
    }
  }
  publishAlert(): void {
    const n = this.alerts++;
    const firing = Math.floor(n / 10) % 2 === 0;
    const alert: AlertPayload = {
      fingerprint: `fp-${n % 10}`,
      status: firing ? "firing" : "resolved",
      rule: "price_change",
      severity: "warning",
      labels: { pair: WS_PAIRS[n % WS_PAIRS.length] ?? "BTC/USD", market: "offchain" },
      summary: `event ${n} ${"x".repeat(this.padBytes)}`,
      value: 0.05,
      threshold: 0.02,
      startsAt: "2026-11-22T10:00:00.000Z",
      endsAt: firing ? null : "2026-11-22T10:01:00.000Z",
      reason: firing ? "first" : "resolved",
      context: {},
    };
    this.harness.hub.publishAlert(alert);
  }
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }
}

const heapMb = (): number => {
  globalThis.gc?.();
  globalThis.gc?.();
  return (globalThis.gc === undefined ? process.memoryUsage().rss : process.memoryUsage().heapUsed) / 2 ** 20;
};

const metric = async (
  m: { get(): Promise<{ values: { value: number; labels: object }[] }> },
  labels: Record<string, string> = {},
): Promise<number> =>
  (await m.get()).values
    .filter((v) =>
      Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
    )
    .reduce((sum, v) => sum + v.value, 0);

describe("WebSocket abuse against the real server", () => {
  const startedAtMs = Date.now();
  const random = seededRandom(SEED + 1);
  let harness: WsHarness;
  let good: GoodClient;
  let publisher: Publisher;
  let firstSeq = 0;
  let startMb = 0;
  let baselineMb = 0;
  const counts = {
    fuzzedFrames: 0,
    fuzzedReplies: 0,
    fuzzedErrors: 0,
    garbageConnections: 0,
    floodMessages: 0,
    floodRateLimited: 0,
    oversize: 0,
    cycles: 0,
    refusedAtMaxClients: 0,
    stalled: 0,
    resubscribes: 0,
    resubscribesWithSince: 0,
    replayed: 0,
    liveOnResubscriber: 0,
    resubscribeMissed: 0,
    resubscribeDuplicated: 0,
    resubscribeUnexpected: 0,
  };

  beforeAll(async () => {
    harness = await startWsHarness(CONFIG);
    const socket = new WebSocket(harness.url, { perMessageDeflate: false });
    good = new GoodClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    socket.send(JSON.stringify({ op: "subscribe", id: "good", channels: ["alerts", "prices", "lifecycle"] }));
    await good.changed.until(() => good.subscribed, "the good client's subscription", 10_000);
    publisher = new Publisher(harness, good);
    // fill the journal ring before the memory baseline so its steady size is not counted as growth
    for (let i = 0; i < CONFIG.journalSize; i++) publisher.publishAlert();
    firstSeq = harness.hub.lastSeq() + 1;
    await good.changed.until(() => good.lastSeq === harness.hub.lastSeq(), "the warm-up events", 10_000);
    startMb = heapMb();
    publisher.start();
  });

  afterAll(async () => {
    await publisher?.stop();
    good?.socket.terminate();
    await harness?.close();
  });

  it("answers every fuzzed text frame with exactly one valid reply or error frame", async () => {
    // mostly valid ids (so requests can succeed), sometimes ones the protocol must refuse
    const id = fc.oneof(
      { weight: 4, arbitrary: fc.string({ maxLength: 8 }) },
      { weight: 3, arbitrary: fc.integer() },
      { weight: 2, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.double() },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.constant(null),
          fc.string({ minLength: 129, maxLength: 140 }),
          fc.boolean(),
          fc.dictionary(fc.string({ maxLength: 3 }), fc.nat()),
        ),
      },
    );
    const names = (valid: readonly string[]) =>
      fc.array(fc.constantFrom(...valid, ...valid.map((v) => v.toLowerCase())), {
        minLength: 1,
        maxLength: 3,
      });
    const channels = fc.array(fc.constantFrom("alerts", "prices", "lifecycle"), {
      minLength: 1,
      maxLength: 3,
    });
    const optional = { requiredKeys: [] as [] };
    // well-formed requests of every op (ids optional), so the fuzzer also exercises the success paths
    const valid = fc.oneof(
      fc
        .record(
          {
            op: fc.constant("subscribe"),
            id,
            channels,
            pairs: fc.oneof(names(WS_PAIRS), fc.constant([])),
            rules: fc.oneof(names(WS_RULES), fc.constant([])),
            minSeverity: fc.constantFrom("info", "warning", "critical"),
            since: fc.nat({ max: 50 }),
          },
          optional,
        )
        .map((m) => ({ ...m, op: "subscribe" })),
      fc
        .record(
          { op: fc.constant("unsubscribe"), id, channels, pairs: names(WS_PAIRS), rules: names(WS_RULES) },
          optional,
        )
        .map((m) => ({ ...m, op: "unsubscribe" })),
      fc.record({ op: fc.constantFrom("snapshot", "ping"), id }, { requiredKeys: ["op"] }),
    );
    // ...and the same with one field replaced, removed or added with an arbitrary value
    const field = fc.constantFrom(
      "op",
      "id",
      "channels",
      "pairs",
      "rules",
      "minSeverity",
      "since",
      "extra",
      "",
    );
    const message = fc.oneof(
      { weight: 3, arbitrary: valid },
      {
        weight: 4,
        arbitrary: fc.tuple(valid, field, fc.option(fc.jsonValue({ maxDepth: 2 }))).map(([m, key, value]) => {
          const copy: Record<string, unknown> = { ...m };
          if (value === null) delete copy[key];
          else copy[key] = value;
          return copy;
        }),
      },
    );
    const text = fc.oneof(
      { weight: 6, arbitrary: message.map((m) => JSON.stringify(m)) },
      { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 64 }) },
      {
        weight: 1,
        arbitrary: message.chain((m) => {
          const s = JSON.stringify(m);
          return fc.nat({ max: s.length }).map((n) => s.slice(0, n));
        }),
      },
    );
    const frame = fc.oneof(
      { weight: 9, arbitrary: text.map((t) => ({ kind: "text" as const, text: t })) },
      {
        weight: 1,
        arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: "binary" as const, bytes })),
      },
    );

    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 20 }), async (frames) => {
        const client = await connectClient(harness.url);
        try {
          for (const f of frames)
            client.socket.send(f.kind === "text" ? f.text : f.bytes, { binary: f.kind === "binary" });
          const replies = (): Frame[] => client.frames.filter((fr) => !EVENT_TYPES.has(fr.type));
          await client.changed.until(
            () => replies().length >= frames.length || client.closeCode !== null,
            "replies",
            10_000,
          );
          expect(client.closeCode).toBeNull();
          // one more round trip proves no extra reply was still on its way
          client.send({ op: "ping", id: "fin" });
          await client.changed.until(() => replies().some((r) => r["id"] === "fin"), "final pong", 10_000);
          const got = replies();
          expect(got).toHaveLength(frames.length + 1);
          frames.forEach((f, i) => {
            const reply = got[i]!;
            counts.fuzzedFrames += 1;
            checkReply(f.kind === "text" ? f.text : null, reply);
            if (reply.type === "error") counts.fuzzedErrors += 1;
            else counts.fuzzedReplies += 1;
          });
        } finally {
          client.socket.terminate();
        }
      }),
      { numRuns: PROPERTY_RUNS, seed: SEED },
    );
    // fast-check and the assertion library allocate ~80 MB once here (the same with 60 or 300 runs, flat
    // afterwards), so the memory bound applies to the connection-level abuse that follows
    baselineMb = heapMb();
  });

  it("drops connections that send protocol garbage and keeps serving", async () => {
    const kinds = [
      Buffer.from([0x81, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f]), // unmasked client frame
      Buffer.from([0x83, 0x80, 1, 2, 3, 4]), // reserved opcode 3
      Buffer.from([0xc1, 0x80, 1, 2, 3, 4]), // RSV1 without an extension
      Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28]), // invalid UTF-8 text
      Buffer.from([0x09, 0x80, 0, 0, 0, 0]), // fragmented control frame
    ];
    for (let i = 0; i < GARBAGE_CONNECTIONS; i++) {
      const { socket, ended } = await rawUpgrade(harness.port);
      const bytes =
        i < kinds.length * 4
          ? kinds[i % kinds.length]!
          : Buffer.from(Array.from({ length: randomInt(random, 2, 200) }, () => randomInt(random, 0, 255)));
      socket.write(bytes);
      // random bytes may parse as an incomplete frame: end our side so the server sees EOF either way
      socket.end();
      await ended;
      counts.garbageConnections += 1;
    }
    await pollUntil(() => harness.ws.clientCount() === 1, "garbage connections to be gone", 10_000);
  });

  it("rate-limits floods and then closes them with 1008", async () => {
    for (let f = 0; f < FLOODERS; f++) {
      const client = await connectClient(harness.url);
      const total = CONFIG.messagesPerSecond * 8;
      for (let i = 0; i < total; i++) client.send({ op: "ping", id: i });
      counts.floodMessages += total;
      expect(await client.closed).toBe(1008);
      const limited = client.frames.filter(
        (fr) => fr.type === "error" && fr["code"] === "rate_limited",
      ).length;
      expect(limited).toBeGreaterThan(0);
      expect(client.count("pong")).toBeLessThanOrEqual(CONFIG.messagesPerSecond * 4);
      counts.floodRateLimited += limited;
    }
    expect(await metric(harness.metrics.wsRejected, { reason: "flood" })).toBe(FLOODERS);
  });

  it("closes oversize messages with 1009", async () => {
    for (let i = 0; i < OVERSIZE; i++) {
      const client = await connectClient(harness.url);
      client.send("x".repeat(CONFIG.maxMessageBytes + 1 + i * 1024));
      expect(await client.closed).toBe(1009);
      counts.oversize += 1;
    }
    expect(await metric(harness.metrics.wsRejected, { reason: "too_large" })).toBe(OVERSIZE);
  });

  it("survives connect/disconnect churn and returns to its baseline", async () => {
    let next = 0;
    const cycle = async (): Promise<void> => {
      const behaviour = randomInt(random, 0, 4);
      if (behaviour === 4) {
        const { socket, ended } = await rawUpgrade(harness.port);
        socket.destroy();
        await ended;
        return;
      }
      const socket = new WebSocket(harness.url, { perMessageDeflate: false });
      socket.on("error", () => undefined);
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      if (behaviour === 3) {
        socket.terminate(); // gone before the upgrade completes
        return closed;
      }
      await new Promise<void>((resolve) => socket.once("message", () => resolve()));
      if (behaviour === 0) socket.close(1000);
      else if (behaviour === 1) socket.terminate();
      else {
        socket.send(JSON.stringify({ op: "subscribe", channels: ["alerts", "prices"] }));
        socket.close(1000);
      }
      return closed;
    };
    const worker = async (): Promise<void> => {
      while (next < CYCLES) {
        next += 1;
        await cycle();
        counts.cycles += 1;
      }
    };
    await Promise.all(Array.from({ length: CYCLE_CONCURRENCY }, worker));
    await pollUntil(() => harness.ws.clientCount() === 1, "churned clients to be gone", 15_000);
    expect(await metric(harness.metrics.wsClients)).toBe(1);
  });

  it("refuses clients beyond maxClients with 503 and accepts again after", async () => {
    const clients: RecordingClient[] = [];
    while (harness.ws.clientCount() < CONFIG.maxClients) clients.push(await connectClient(harness.url));
    for (let i = 0; i < 5; i++) {
      const status = await new Promise<number>((resolve) => {
        const socket = new WebSocket(harness.url);
        socket.on("error", () => undefined);
        socket.once("unexpected-response", (_req, res) => {
          resolve(res.statusCode ?? 0);
          socket.terminate();
        });
        socket.once("open", () => resolve(101));
      });
      expect(status).toBe(503);
      counts.refusedAtMaxClients += 1;
    }
    for (const client of clients) client.socket.close();
    await Promise.all(clients.map((c) => c.closed));
    await pollUntil(() => harness.ws.clientCount() === 1, "clients to leave", 10_000);
    const again = await connectClient(harness.url);
    again.socket.close();
    await again.closed;
  });

  it("closes stalled readers with 1013 without growing memory", async () => {
    publisher.padBytes = 4_096;
    for (let i = 0; i < STALLED; i++) {
      const before = await metric(harness.metrics.wsSlowConsumers);
      const stalled = await connectClient(harness.url);
      stalled.send({ op: "subscribe", id: "s", channels: ["alerts", "prices"] });
      await stalled.changed.until(() => stalled.count("subscribed") > 0, "subscribed", 10_000);
      stalled.socket.pause(); // stop reading: the kernel buffers fill, then the server's send buffer
      publisher.burst = true;
      let slow = before;
      await pollUntil(
        () => slow > before,
        "the stalled reader to be cut off",
        60_000,
        async () => {
          slow = await metric(harness.metrics.wsSlowConsumers);
        },
      );
      publisher.burst = false;
      expect(slow).toBe(before + 1);
      // the server closed it with 1013 and waits for a close frame this paused client never reads
      stalled.socket.terminate();
      await pollUntil(() => harness.ws.clientCount() === 1, "the stalled reader to be gone", 10_000);
      counts.stalled += 1;
    }
    publisher.padBytes = 200;
  });

  it("re-subscribes with since under live traffic: every matching event not yet sent, once", async () => {
    const events = new Map<number, JournaledEvent>();
    for (const event of harness.hub.replay(0).events) events.set(event.seq, event);
    const tap = harness.hub.events$.subscribe((event) => {
      if (event.type !== "price") events.set(event.seq, event);
    });
    const client = await connectClient(harness.url);
    const sinceOf = new Map<unknown, number>();
    try {
      for (let i = 0; i < RESUBSCRIBES; i++) {
        const id = `r${i}`;
        const lastSeq = harness.hub.lastSeq();
        const since = random() < 0.6 ? Math.max(0, lastSeq - randomInt(random, 0, 300)) : undefined;
        if (since !== undefined) sinceOf.set(id, since);
        client.send({
          op: "subscribe",
          id,
          channels: ["alerts"],
          pairs: WS_PAIRS.filter(() => random() < 0.5),
          minSeverity: SEVERITY_ORDER[randomInt(random, 0, 2)],
          ...(since === undefined ? {} : { since }),
        });
        await client.changed.until(() => client.frames.some((f) => f["id"] === id), `reply ${id}`, 10_000);
        // let live traffic flow under this filter before the next change
        const target = lastSeq + randomInt(random, 1, 12);
        await pollUntil(() => harness.hub.lastSeq() >= target, "live traffic", 10_000);
      }
      client.send({ op: "ping", id: "end" });
      await client.changed.until(() => client.frames.some((f) => f["id"] === "end"), "the last pong", 10_000);
    } finally {
      tap.unsubscribe();
      client.socket.terminate();
    }
    const result = checkResubscribes(client.frames, sinceOf, events);
    counts.resubscribes += RESUBSCRIBES;
    counts.resubscribesWithSince += sinceOf.size;
    counts.replayed += result.replayed;
    counts.liveOnResubscriber += result.live;
    counts.resubscribeMissed += result.missed.length;
    counts.resubscribeDuplicated += result.duplicated.length;
    counts.resubscribeUnexpected += result.unexpected.length;
    expect(result).toMatchObject({ missed: [], duplicated: [], unexpected: [] });
  });

  it("delivered every event to the good client, in order, with bounded memory", async () => {
    await publisher.stop();
    // push the large events out of the journal ring before measuring
    for (let i = 0; i < CONFIG.journalSize; i++) publisher.publishAlert();
    const lastSeq = harness.hub.lastSeq();
    await good.changed.until(() => good.lastSeq === lastSeq, "the good client to catch up", 30_000);
    const expected = Array.from({ length: lastSeq - firstSeq + 1 }, (_, i) => firstSeq + i);
    const received = good.seqs.filter((seq) => seq >= firstSeq);
    const lost = expected.length - new Set(received).size;
    expect(good.outOfOrder).toBe(0);
    expect(received).toEqual(expected);
    expect(good.ticks).toBe(publisher.ticks);
    expect(good.socket.readyState).toBe(WebSocket.OPEN);
    const afterMb = heapMb();
    const growthMb = afterMb - baselineMb;
    const boundMb = globalThis.gc === undefined ? 96 : 24;
    const report = reportSuite(
      "ws-abuse",
      "fuzzed, malformed and abusive WebSocket clients against the real server",
      startedAtMs,
      {
        "fuzzed frames sent (fast-check)": counts.fuzzedFrames,
        "  answered with a reply": counts.fuzzedReplies,
        "  answered with an error frame": counts.fuzzedErrors,
        "garbage-frame connections dropped": counts.garbageConnections,
        "flood messages sent": counts.floodMessages,
        "  rate_limited error frames": counts.floodRateLimited,
        "  flooders closed with 1008": await metric(harness.metrics.wsRejected, { reason: "flood" }),
        "oversize messages (closed with 1009)": counts.oversize,
        "connect/disconnect cycles": counts.cycles,
        "upgrades refused at maxClients (503)": counts.refusedAtMaxClients,
        "stalled readers closed (1013)": counts.stalled,
        "filter changes by re-subscribe on one connection": counts.resubscribes,
        "  of which with since": counts.resubscribesWithSince,
        "  events replayed to it": counts.replayed,
        "  live events to it": counts.liveOnResubscriber,
        "  matching events never sent to it": counts.resubscribeMissed,
        "  events sent to it twice": counts.resubscribeDuplicated,
        "  events sent to it that did not match": counts.resubscribeUnexpected,
        "events published during abuse": expected.length,
        "events delivered to the good client": received.length,
        "price ticks delivered to the good client": good.ticks,
        lost,
        [`${globalThis.gc === undefined ? "RSS" : "heap after GC"} at start (MB)`]: Number(
          startMb.toFixed(1),
        ),
        [`${globalThis.gc === undefined ? "RSS" : "heap after GC"} after fuzzing (MB)`]: Number(
          baselineMb.toFixed(1),
        ),
        [`${globalThis.gc === undefined ? "RSS" : "heap after GC"} growth through the abuse (MB, bound ${boundMb})`]:
          Number(growthMb.toFixed(1)),
      },
    );
    expect(report.counts["lost"]).toBe(0);
    expect(growthMb).toBeLessThan(boundMb);
  });
});

/** A reply is valid when it is the reply for the op (echoing the id) or an error frame with a stable code. */
function checkReply(sent: string | null, reply: Frame): void {
  let parsed: unknown;
  try {
    parsed = sent === null ? undefined : JSON.parse(sent);
  } catch {
    parsed = undefined;
  }
  const request =
    typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  const rawId = request?.["id"];
  const validId =
    rawId === undefined || rawId === null
      ? null
      : (typeof rawId === "string" && rawId.length <= 128) ||
          (typeof rawId === "number" && Number.isFinite(rawId))
        ? rawId
        : undefined;
  if (reply.type === "error") {
    expect(ERROR_CODES, JSON.stringify(reply)).toContain(reply["code"]);
    expect(typeof reply["message"]).toBe("string");
    if (reply["id"] !== null) expect(reply["id"]).toEqual(validId);
    return;
  }
  expect(request, `a reply to a non-object: ${JSON.stringify(reply)}`).not.toBeNull();
  expect(reply.type).toBe(REPLY_FOR[String(request?.["op"])]);
  expect(reply["id"]).toEqual(validId);
}

const SEVERITY_ORDER: readonly Severity[] = ["info", "warning", "critical"];

/**
 * Check a re-subscribing client's frames against the journal: each `since` replay is exactly the
 * matching events of (since, seq] it was not sent yet (minus a gap), and between replies it got exactly
 * the live events matching the filter in force. Returns the seqs that broke the contract.
 */
function checkResubscribes(
  frames: readonly Frame[],
  sinceOf: ReadonlyMap<unknown, number>,
  events: ReadonlyMap<number, JournaledEvent>,
): { replayed: number; live: number; missed: number[]; duplicated: number[]; unexpected: number[] } {
  const out = {
    replayed: 0,
    live: 0,
    missed: [] as number[],
    duplicated: [] as number[],
    unexpected: [] as number[],
  };
  const sent = new Set<number>();
  type Filter = { pairs: readonly string[]; minSeverity: Severity };
  const matches = (filter: Filter, seq: number): boolean => {
    const event = events.get(seq);
    if (event?.type !== "alert") return false;
    const pair = event.alert.labels["pair"] ?? "";
    const rank = (severity: Severity): number => SEVERITY_ORDER.indexOf(severity);
    return (
      (filter.pairs.length === 0 || filter.pairs.includes(pair)) &&
      rank(event.alert.severity) >= rank(filter.minSeverity)
    );
  };
  /** Compare what was received for (fromSeq, toSeq] with what the filter should have brought. */
  const settle = (fromSeq: number, toSeq: number, want: (seq: number) => boolean, got: readonly number[]) => {
    const gotSet = new Set(got);
    for (let seq = fromSeq + 1; seq <= toSeq; seq++) if (want(seq) && !gotSet.has(seq)) out.missed.push(seq);
    for (const seq of got) if (!want(seq)) out.unexpected.push(seq);
  };
  let live: { filter: Filter; fromSeq: number; got: number[] } | null = null;
  let replay: {
    filter: Filter;
    since: number;
    toSeq: number;
    sentBefore: Set<number>;
    got: number[];
    gapTo: number;
  } | null = null;
  const closeReplay = (): void => {
    if (replay === null) return;
    const { filter, since, toSeq, sentBefore, gapTo } = replay;
    settle(Math.max(since, gapTo), toSeq, (seq) => matches(filter, seq) && !sentBefore.has(seq), replay.got);
    replay = null;
  };
  for (const frame of frames) {
    const seq = typeof frame["seq"] === "number" ? frame["seq"] : null;
    if (frame.type === "subscribed" || (frame.type === "pong" && frame["id"] === "end")) {
      closeReplay();
      if (live !== null && seq !== null) settle(live.fromSeq, seq, (s) => matches(live!.filter, s), live.got);
      if (frame.type === "pong" || seq === null) break;
      const filter = { pairs: frame["pairs"] as string[], minSeverity: frame["minSeverity"] as Severity };
      live = { filter, fromSeq: seq, got: [] };
      const since = sinceOf.get(frame["id"]);
      if (since !== undefined)
        replay = { filter, since, toSeq: seq, sentBefore: new Set(sent), got: [], gapTo: 0 };
    } else if (frame.type === "gap" && replay !== null) {
      replay.gapTo = frame["to"] as number;
    } else if (frame.type === "alert" && seq !== null) {
      if (sent.has(seq)) out.duplicated.push(seq);
      sent.add(seq);
      if (replay !== null && seq <= replay.toSeq) {
        replay.got.push(seq);
        out.replayed += 1;
      } else {
        closeReplay();
        live?.got.push(seq);
        out.live += 1;
      }
    }
  }
  return out;
}
