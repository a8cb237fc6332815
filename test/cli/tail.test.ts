// Tests of `pragma-monitor tail`: pure line formatting and argument parsing, and reconnect/resume against a real server.
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import type { AlertEvent, LifecycleEvent } from "../../src/domain/events.js";
import { createTailClient, resumeAfter, runTail, type TailOutput } from "../../src/cli/tail.js";
import { parseTailArgs } from "../../src/cli/tail-args.js";
import {
  formatActiveLine,
  formatAlertLine,
  formatConnectedLine,
  formatDuration,
  formatGapLine,
  formatIdleLine,
  formatLifecycleLine,
  nextIdleNoticeMs,
} from "../../src/cli/tail-format.js";
import { alert, metricValue, startHarness, until, type Harness } from "../sinks/ws/harness.js";

const event = (
  overrides: Parameters<typeof alert>[0] = {},
  extra: Partial<AlertEvent["alert"]> = {},
): AlertEvent => ({
  type: "alert",
  seq: 1042,
  alert: { ...alert({ summary: "BTC/USD moved +5.02% in 1min (threshold 2%)", ...overrides }), ...extra },
});

const parentAlert: AlertEvent["alert"] = {
  ...alert({ summary: "Pragma API unreachable (ECONNREFUSED): 4 of 4 targets failing since 10:00:03" }),
  rule: "upstream_down",
  fingerprint: "00000000deadbeef",
};

describe("formatAlertLine", () => {
  it.each<[string, AlertEvent, string]>([
    [
      "a firing alert",
      event({ severity: "critical" }),
      "2026-11-22T10:00:03.120Z #1042 FIRING critical price_change pair=BTC/USD market=offchain — BTC/USD moved +5.02% in 1min (threshold 2%)",
    ],
    [
      "a resolved alert at its end time",
      event({ status: "resolved" }),
      "2026-11-22T10:05:03.120Z #1042 RESOLVED warning price_change pair=BTC/USD market=offchain — BTC/USD moved +5.02% in 1min (threshold 2%)",
    ],
    [
      "a reminder, quoted label values and no terminal escapes",
      event(
        { severity: "info", summary: "evil\x1b[2Jsummary" },
        { reason: "repeat", labels: { vault: "a b" } },
      ),
      '2026-11-22T10:00:03.120Z #1042 FIRING info price_change (repeat) vault="a b" — evil?[2Jsummary',
    ],
    [
      "a silenced alert with its silences",
      event({}, { silencedBy: ["s-1", "maintenance:nightly"] }),
      "2026-11-22T10:00:03.120Z #1042 FIRING warning price_change pair=BTC/USD market=offchain — BTC/USD moved +5.02% in 1min (threshold 2%) [silenced by s-1, maintenance:nightly]",
    ],
  ])("renders %s without colour", (_name, input, line) => {
    expect(formatAlertLine(input, { color: false })).toBe(line);
  });

  it.each<[string, AlertEvent["alert"] | undefined, string]>([
    [
      "its parent's rule and summary when tail saw it",
      parentAlert,
      "[caused by upstream_down: Pragma API unreachable (ECONNREFUSED): 4 of 4 targets failing since 10:00:03]",
    ],
    ["its parent's fingerprint when tail did not see it", undefined, "[caused by 00000000deadbeef]"],
    [
      "its parent's fingerprint when the alert given is another one",
      { ...parentAlert, fingerprint: "0123" },
      "[caused by 00000000deadbeef]",
    ],
  ])("names a child's cause: %s", (_name, parent, part) => {
    const child = event({ status: "firing" }, { rule: "upstream_error", causedBy: "00000000deadbeef" });
    const line = formatAlertLine(child, { color: false, parent });
    expect(line.endsWith(`(threshold 2%) ${part}`)).toBe(true);
    expect(formatAlertLine(event(), { color: false, parent })).not.toContain("caused by");
  });

  it.each<[string, AlertEvent, string]>([
    ["critical in red", event({ severity: "critical" }), "\x1b[31mFIRING critical\x1b[0m"],
    ["warning in yellow", event({ severity: "warning" }), "\x1b[33mFIRING warning\x1b[0m"],
    ["info in cyan", event({ severity: "info" }), "\x1b[36mFIRING info\x1b[0m"],
    [
      "resolved in green",
      event({ severity: "critical", status: "resolved" }),
      "\x1b[32mRESOLVED critical\x1b[0m",
    ],
  ])("colours %s", (_name, input, segment) => {
    expect(formatAlertLine(input, { color: true })).toContain(segment);
  });

  it.each<[string, LifecycleEvent, string]>([
    [
      "a daemon phase",
      {
        type: "lifecycle",
        seq: 7,
        event: "config_reloaded",
        at: "2026-11-22T10:00:00.000Z",
        version: "1.2.3",
      },
      "2026-11-22T10:00:00.000Z #7 daemon config_reloaded (v1.2.3)",
    ],
    [
      "a silence created, with its matchers, end, author and comment",
      {
        type: "lifecycle",
        seq: 8,
        event: "silence_created",
        at: "2026-11-22T10:00:00.000Z",
        version: "1.2.3",
        detail: {
          id: "s-1",
          cause: "created",
          matchers: '{pair="BTC/USD"}',
          endsAt: "2026-11-22T12:00:00.000Z",
          createdBy: "ana",
          comment: "upgrade\x1b",
        },
      },
      '2026-11-22T10:00:00.000Z #8 silence created s-1 {pair="BTC/USD"} until 2026-11-22T12:00:00.000Z by ana (created): upgrade?',
    ],
  ])("renders the lifecycle event %s", (_name, input, line) => {
    expect(formatLifecycleLine(input, { color: false })).toBe(line);
  });

  it("names the missed range in gap notices", () => {
    expect(formatGapLine(5, 9)).toBe("gap: events #5..#9 are no longer held by the server and were missed");
  });
});

describe("what tail prints on connect and while idle", () => {
  it("shows an alert already firing with `active` where an event shows its seq", () => {
    expect(formatActiveLine(event({ severity: "critical" }).alert, { color: false })).toBe(
      "2026-11-22T10:00:03.120Z active FIRING critical price_change pair=BTC/USD market=offchain — BTC/USD moved +5.02% in 1min (threshold 2%)",
    );
  });

  it.each<[string, number, number | null, string]>([
    ["a first connection", 2, null, "connected to ws://h/ws (2 firing)"],
    ["a quiet one", 0, null, "connected to ws://h/ws (0 firing)"],
    ["a resume", 1, 41, "reconnected to ws://h/ws (1 firing); replaying what was missed after #41"],
  ])("announces %s", (_name, firing, resumedAfterSeq, line) => {
    expect(formatConnectedLine("ws://h/ws", firing, resumedAfterSeq)).toBe(line);
  });

  it.each<[number, string]>([
    [999, "0 s"],
    [45_000, "45 s"],
    [60_000, "1 min"],
    [3_599_999, "59 min"],
    [3_900_000, "1 h 5 min"],
  ])("formats %i ms as %s", (durationMs, text) => {
    expect(formatDuration(durationMs)).toBe(text);
  });

  it("says it is still connected, for how long nothing happened and what fires", () => {
    expect(formatIdleLine("ws://h/ws", 180_000, 3)).toBe(
      "still connected to ws://h/ws: no new events for 3 min (3 firing)",
    );
  });

  it.each<[number | null, number]>([
    [null, 60_000],
    [60_000, 120_000],
    [240_000, 480_000],
    [480_000, 600_000],
    [600_000, 600_000],
  ])("after an idle notice at interval %s waits %i ms for the next", (previousMs, nextMs) => {
    expect(nextIdleNoticeMs(previousMs, { firstMs: 60_000, maxMs: 600_000 })).toBe(nextMs);
  });
});

describe("parseTailArgs", () => {
  it("applies defaults and takes the token from the environment", () => {
    expect(parseTailArgs([], { PM_SERVER_TOKEN: "t" })).toEqual({
      ok: true,
      options: {
        url: "ws://127.0.0.1:8787/ws",
        token: "t",
        pairs: [],
        rules: [],
        minSeverity: null,
        since: null,
        json: false,
        prices: false,
      },
    });
  });

  it("reads every flag", () => {
    const parsed = parseTailArgs(
      [
        "--url",
        "ws://h/ws",
        "--pairs",
        "BTC/USD, ETH/USD",
        "--rules",
        "price_change",
        "--min-severity",
        "critical",
        "--since",
        "7",
        "--json",
        "--prices",
      ],
      {},
    );
    expect(parsed).toMatchObject({
      ok: true,
      options: {
        url: "ws://h/ws",
        pairs: ["BTC/USD", "ETH/USD"],
        rules: ["price_change"],
        minSeverity: "critical",
        since: 7,
        json: true,
        prices: true,
      },
    });
  });

  it.each([[["--since", "-1"]], [["--min-severity", "loud"]], [["--url", "http://x"]], [["--bogus"]]])(
    "refuses %j",
    (argv) => {
      expect(parseTailArgs(argv, {}).ok).toBe(false);
    },
  );
});

/** Start a tail client against `harness` with extra arguments; resolves once it has subscribed. */
async function startTailClient(
  harness: Harness,
  args: readonly string[],
  onFrame: (frame: { type: string; seq?: number }) => void = () => undefined,
) {
  const outputs: TailOutput[] = [];
  const sockets: WebSocket[] = [];
  const options = parseTailArgs(["--url", harness.url, ...args], {});
  if (!options.ok) throw new Error(options.message);
  const client = createTailClient({
    options: options.options,
    output: (out) => outputs.push(out),
    random: () => 0,
    createSocket: (url, headers) => {
      const socket = new WebSocket(url, { headers });
      socket.on("message", (data: Buffer) => onFrame(JSON.parse(data.toString("utf8")) as { type: string }));
      sockets.push(socket);
      return socket;
    },
  });
  const seqs = (): number[] =>
    outputs.flatMap((out) => (out.kind === "event" && out.event.type !== "price" ? [out.event.seq] : []));
  // subscribe is handled synchronously on receipt, so once counted the subscription is in place
  const subscribes = () => metricValue(harness.metrics.wsMessagesIn, { op: "subscribe" });
  await until(async () => (await subscribes()) === 1);
  return { client, outputs, sockets, seqs, subscribes };
}

describe("tail against a real server", () => {
  let harness: Harness;
  afterEach(async () => harness.close());

  it("reconnects after a forced disconnect and resumes with no gap and no duplicate", async () => {
    harness = await startHarness();
    const { client, outputs, sockets, seqs, subscribes } = await startTailClient(harness, []);
    harness.hub.publishAlert(alert({ summary: "before" }));
    await until(() => seqs().includes(1));
    sockets[0]!.terminate();
    harness.hub.publishAlert(alert({ summary: "while away 1" }));
    harness.hub.publishAlert(alert({ summary: "while away 2" }));
    await until(() => sockets.length === 2 && seqs().includes(3));
    harness.hub.publishAlert(alert({ summary: "after" }));
    await until(() => seqs().includes(4));
    client.stop();
    expect(await client.done).toBe(0);
    expect(seqs()).toEqual([1, 2, 3, 4]);
    expect(await subscribes()).toBe(2);
    expect(outputs.some((out) => out.kind === "gap")).toBe(false);
    const connections = outputs.flatMap((out) => (out.kind === "connected" ? [out] : []));
    expect(connections.map((out) => [out.resumedAfterSeq, out.active.length])).toEqual([
      [null, 0],
      [1, 3],
    ]);
  });

  /** runTail with buffers for stdout and stderr; stop with `abort`. */
  const runTailBuffered = (argv: readonly string[], env: Record<string, string> = {}) => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const abort = new AbortController();
    const exit = runTail(argv, {
      stdout: { write: (text: string) => stdout.push(text) },
      stderr: { write: (text: string) => stderr.push(text) },
      env,
      isTTY: false,
      signal: abort.signal,
    });
    return { stdout, stderr, exit, stop: () => abort.abort() };
  };

  it("on connect says how many alerts fire and lists them, so a later RESOLVED is one it showed", async () => {
    harness = await startHarness();
    const spike = alert({ summary: "BTC spike", severity: "critical" });
    harness.hub.publishAlert(spike);
    harness.hub.publishAlert(alert({ pair: "ETH/USD", summary: "ETH stale" }));
    harness.hub.publishAlert(alert({ pair: "SOL/USD", summary: "filtered out" }));
    const tail = runTailBuffered(["--url", harness.url, "--pairs", "BTC/USD,ETH/USD"]);
    await until(() => tail.stdout.length === 2);
    expect(tail.stderr).toEqual([`tail: connected to ${harness.url} (2 firing)\n`]);
    expect(tail.stdout.join("")).toMatch(
      /^\S+ active FIRING critical price_change .*— BTC spike\n\S+ active FIRING warning/,
    );
    expect(tail.stdout.join("")).not.toMatch(/filtered out/);

    harness.hub.publishAlert({
      ...spike,
      status: "resolved",
      reason: "resolved",
      endsAt: "2026-11-22T10:05:03.120Z",
    });
    await until(() => tail.stdout.length === 3);
    expect(tail.stdout[2]).toMatch(/^\S+ #4 RESOLVED critical price_change .*— BTC spike\n$/);
    tail.stop();
    expect(await tail.exit).toBe(0);
  });

  it("prints a child alert with its parent's rule and summary, on connect and live", async () => {
    harness = await startHarness();
    const parent = alert({ rule: "upstream_down", summary: "Pragma API failing (HTTP 500): 4 of 4 targets" });
    harness.hub.publishAlert(parent);
    harness.hub.publishAlert({
      ...alert({ rule: "upstream_error", summary: "BTC failing" }),
      causedBy: parent.fingerprint,
    });
    const tail = runTailBuffered(["--url", harness.url]);
    await until(() => tail.stdout.length === 2);
    expect(tail.stdout[1]).toMatch(
      /active FIRING warning upstream_error .*— BTC failing \[caused by upstream_down: Pragma API failing \(HTTP 500\): 4 of 4 targets\]\n$/,
    );
    harness.hub.publishAlert({
      ...alert({ rule: "upstream_error", summary: "ETH failing" }),
      causedBy: parent.fingerprint,
    });
    harness.hub.publishAlert({
      ...alert({ rule: "upstream_error", summary: "orphan" }),
      causedBy: "feedfacefeedface",
    });
    await until(() => tail.stdout.length === 4);
    expect(tail.stdout[2]).toMatch(/— ETH failing \[caused by upstream_down: Pragma API failing/);
    expect(tail.stdout[3]).toMatch(/— orphan \[caused by feedfacefeedface\]\n$/);
    tail.stop();
    expect(await tail.exit).toBe(0);
  });

  it("while nothing happens, says at growing intervals that it is still connected and what fires", async () => {
    harness = await startHarness();
    harness.hub.publishAlert(alert({ summary: "firing before" }));
    const outputs: TailOutput[] = [];
    const options = parseTailArgs(["--url", harness.url], {});
    if (!options.ok) throw new Error(options.message);
    const client = createTailClient({
      options: options.options,
      output: (out) => outputs.push(out),
      idleNotice: { firstMs: 100, maxMs: 200 },
    });
    const idle = () => outputs.flatMap((out) => (out.kind === "idle" ? [out] : []));
    await until(() => idle().length === 3);
    expect(idle().map((out) => [out.idleMs, out.firing, out.url])).toEqual([
      [100, 1, harness.url],
      [300, 1, harness.url],
      [500, 1, harness.url],
    ]);
    // an event restarts the count
    harness.hub.publishAlert(alert({ summary: "second" }));
    await until(() => outputs.some((out) => out.kind === "event"));
    const before = idle().length;
    await until(() => idle().length === before + 1);
    expect(idle()[before]).toMatchObject({ idleMs: 100, firing: 2 });
    client.stop();
    expect(await client.done).toBe(0);
  });

  it("resumes a sparse filter from the heartbeat seq: no false gap after many non-matching events", async () => {
    harness = await startHarness({ heartbeatMs: 40, journalSize: 100 });
    const heartbeats: number[] = [];
    const { client, outputs, sockets, seqs } = await startTailClient(
      harness,
      ["--pairs", "SOL/USD", "--min-severity", "critical"],
      (frame) => {
        if (frame.type === "heartbeat" && frame.seq !== undefined) heartbeats.push(frame.seq);
      },
    );
    harness.hub.publishAlert(alert({ pair: "SOL/USD", severity: "critical", summary: "seen" }));
    await until(() => seqs().includes(1));
    // three journals' worth of events the filter never matches: the last one seen falls out of the journal
    for (let i = 0; i < 300; i++)
      harness.hub.publishAlert(alert({ pair: i % 2 === 0 ? "BTC/USD" : "SOL/USD" }));
    await until(() => heartbeats.some((seq) => seq >= 301), 5_000);
    sockets[0]!.terminate();
    harness.hub.publishAlert(alert({ pair: "ETH/USD", severity: "critical" }));
    harness.hub.publishAlert(alert({ pair: "SOL/USD", severity: "critical", summary: "while away" }));
    await until(() => seqs().includes(303), 5_000);
    client.stop();
    expect(await client.done).toBe(0);
    expect(seqs()).toEqual([1, 303]);
    expect(outputs.filter((out) => out.kind === "gap")).toEqual([]);
  });

  it("runTail prints JSON lines and exits 0 when stopped", async () => {
    harness = await startHarness({ token: "tok" });
    const stdout: string[] = [];
    const stderr: string[] = [];
    const abort = new AbortController();
    const exit = runTail(["--url", harness.url, "--json", "--since", "0"], {
      stdout: { write: (text: string) => stdout.push(text) },
      stderr: { write: (text: string) => stderr.push(text) },
      env: { PM_SERVER_TOKEN: "tok" },
      isTTY: true,
      signal: abort.signal,
    });
    harness.hub.publishAlert(alert({ summary: "journaled before connect" }));
    await until(() => stdout.length === 2);
    // the `subscribed` reply as received (it carries `active`), then the replayed event
    expect(JSON.parse(stdout[0]!)).toMatchObject({
      type: "subscribed",
      seq: 1,
      active: [{ status: "firing" }],
    });
    expect(JSON.parse(stdout[1]!)).toMatchObject({
      type: "alert",
      seq: 1,
      alert: { summary: "journaled before connect" },
    });
    abort.abort();
    expect(await exit).toBe(0);
    expect(stderr).toEqual([`tail: connected to ${harness.url} (1 firing)\n`]);
  });

  it("runTail exits 64 when the server refuses the filter (an unknown pair is a usage error)", async () => {
    harness = await startHarness();
    const tail = runTailBuffered(["--url", harness.url, "--pairs", "DOGE/USD"]);
    expect(await tail.exit).toBe(64);
    expect(tail.stderr.join("")).toMatch(/server error bad_request: .*DOGE\/USD/);
  });

  it("runTail exits 77 when the token is refused", async () => {
    harness = await startHarness({ token: "tok" });
    const stderr: string[] = [];
    const code = await runTail(["--url", harness.url, "--token", "nope"], {
      stdout: { write: () => true },
      stderr: { write: (text: string) => stderr.push(text) },
      env: {},
      isTTY: false,
      signal: new AbortController().signal,
    });
    expect(code).toBe(77);
    expect(stderr.join("")).toMatch(/unauthorized/);
  });
});

describe("tail against a scripted server", () => {
  it("ignores a heartbeat that arrives before its subscribe is answered (it speaks of no filter yet)", async () => {
    // a scripted server: the heartbeat tick falls between hello and the subscribe reply
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    const subscribes: Record<string, unknown>[] = [];
    server.on("connection", (socket) => {
      socket.send(JSON.stringify({ type: "hello", protocol: 1, version: "x", seq: 4, heartbeatMs: 30_000 }));
      socket.on("message", (data: Buffer) => {
        const message = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
        subscribes.push(message);
        socket.send(JSON.stringify({ type: "heartbeat", seq: 9 }));
        socket.send(JSON.stringify({ type: "subscribed", id: message["id"], seq: 9 }));
        for (const seq of [5, 6]) socket.send(JSON.stringify({ type: "alert", seq, alert: alert() }));
      });
    });
    const { port } = server.address() as { port: number };
    const options = parseTailArgs(["--url", `ws://127.0.0.1:${port}`, "--since", "4"], {});
    if (!options.ok) throw new Error(options.message);
    const outputs: TailOutput[] = [];
    const client = createTailClient({ options: options.options, output: (out) => outputs.push(out) });
    try {
      // before the fix the early heartbeat moved the resume point to 9 and both replayed events were dropped
      await until(() => outputs.filter((out) => out.kind === "event").length === 2);
      expect(subscribes[0]).toMatchObject({ since: 4 });
    } finally {
      client.stop();
      await client.done;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("resumeAfter", () => {
  const answered = { subscribed: true, subscribedSince: null };
  const resumed = { subscribed: true, subscribedSince: 40 };
  const waiting = { subscribed: false, subscribedSince: 40 };
  it.each([
    {
      name: "a fresh subscribe starts at the server's seq",
      last: null,
      frame: { type: "subscribed", seq: 9 },
      conn: answered,
      want: { lastSeq: 9, show: true },
    },
    {
      name: "a resumed subscribe keeps its point",
      last: 40,
      frame: { type: "subscribed", seq: 90 },
      conn: resumed,
      want: { lastSeq: 40, show: true },
    },
    {
      name: "a new event advances and shows",
      last: 40,
      frame: { type: "alert", seq: 41 },
      conn: resumed,
      want: { lastSeq: 41, show: true },
    },
    {
      name: "a replayed event already shown is skipped",
      last: 41,
      frame: { type: "lifecycle", seq: 41 },
      conn: resumed,
      want: { lastSeq: 41, show: false },
    },
    {
      name: "the first event ever shows",
      last: null,
      frame: { type: "alert", seq: 3 },
      conn: answered,
      want: { lastSeq: 3, show: true },
    },
    {
      name: "a heartbeat vouches for its seq",
      last: 41,
      frame: { type: "heartbeat", seq: 90 },
      conn: resumed,
      want: { lastSeq: 90, show: false },
    },
    {
      name: "a pong never moves the point back",
      last: 95,
      frame: { type: "pong", seq: 90 },
      conn: resumed,
      want: { lastSeq: 95, show: false },
    },
    {
      name: "a heartbeat before the subscribe is answered says nothing of the filter",
      last: 4,
      frame: { type: "heartbeat", seq: 9 },
      conn: waiting,
      want: { lastSeq: 4, show: false },
    },
  ])("$name", ({ last, frame, conn, want }) => {
    expect(resumeAfter(last, frame, conn)).toEqual(want);
  });
});
