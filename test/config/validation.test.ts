// Strict validation: every problem is reported as `key: reason`, down to array elements.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { configErrorOf, loadWith, problemLines, writeConfig } from "./helpers.js";

const bare = { env: {}, defaultFile: null } as const;
const rule = (fields: object) => ({ rules: [fields] });

describe("unknown keys", () => {
  it.each([
    [{ nope: 1 }, "nope: unknown key"],
    [{ server: { prot: 1 } }, "server.prot: unknown key (did you mean port?)"],
    [
      { rules: [{ kind: "stale_price" }, {}, { kind: "price_change", treshold: 0.02 }] },
      "rules[2].treshold: unknown key (did you mean threshold?)",
    ],
    [rule({ kind: "stale_price", windowMs: 1000 }), "rules[0].windowMs: unknown key"],
    [
      { rules: [{ kind: "vault_status", overrides: { "btc/usd": { treshold: 1 } } }] },
      "rules[0].overrides.btc/usd.treshold: unknown key (did you mean threshold?)",
    ],
    [
      { sinks: [{ kind: "slack", url: "https://hooks.slack.com/x", channel: "#a" }] },
      "sinks[0].channel: unknown key",
    ],
    [
      { monitors: { offchain: [{ pair: "BTC/USD", entry_type: "spot" }] } },
      "monitors.offchain[0].entry_type: unknown key (did you mean entryType?)",
    ],
    [
      { monitors: { vaults: [{ id: "v", period: 5 }] } },
      "monitors.vaults[0].period: unknown key (did you mean periodMs?)",
    ],
  ])("%j → %s", (content, line) => {
    expect(problemLines(() => loadWith(content, bare))).toContain(line);
  });

  it("rejects unknown flags and names the key in details", () => {
    const error = configErrorOf(() => loadConfig({ ...bare, argvOverrides: { "server.prt": "1" } }));
    expect(error.details.key).toBe("server.prt");
    expect(error.message).toContain("server.prt: unknown key (did you mean server.port?)");
  });
});

describe("types, enums and ranges", () => {
  it.each([
    [{ server: { port: 70000 } }, "server.port: must be an integer from 0 to 65535: value was 70000"],
    [{ server: { port: "eighty" } }, 'server.port: must be an integer from 0 to 65535: value was "eighty"'],
    [
      { log: { level: "loud" } },
      'log.level: must be one of the possible values: ["fatal","error","warn","info","debug","trace"]: value was "loud"',
    ],
    [{ log: 5 }, "log: must be an object (a section of keys)"],
    [
      { upstream: { url: "ftp://x" } },
      'upstream.url: must be "simulator" or an absolute http(s) URL: value was "ftp://x"',
    ],
    [{ monitors: { jitter: 2 } }, "monitors.jitter: must be a number from 0 to 1: value was 2"],
    [
      { monitors: { offchain: [{ pair: "btc-usd" }] } },
      'monitors.offchain[0].pair: must be LETTERS/LETTERS, got "btc-usd"',
    ],
    [
      { monitors: { offchain: [{ pair: "BTC/USD", aggregation: "mean" }] } },
      'monitors.offchain[0].aggregation: must be one of median, twap, got "mean" (did you mean median?)',
    ],
    [
      { monitors: { offchain: [{ pair: "BTC/USD", aggregation: "twap" }] } },
      "monitors.offchain[0].interval: upstream rejects interval 1s with aggregation twap (400 Unsupported interval); twap supports 1min, 5min, 15min, 1h, 2h, 1d",
    ],
    [
      { monitors: { offchain: [{ pair: "BTC/USD", periodMs: 10 }] } },
      "monitors.offchain[0].periodMs: must be an integer from 100 to 86400000, got 10",
    ],
    [
      { monitors: { onchain: [{ pair: "BTC/USD", network: "mainnet" }] } },
      'monitors.onchain[0].network: must be one of starknet-mainnet, starknet-sepolia, got "mainnet"',
    ],
    [{ monitors: { funding: [{ pair: "BTC/USD" }] } }, "monitors.funding[0].source: required"],
    [
      { monitors: { offchain: "BTC/USD" } },
      "monitors.offchain: must be an array (JSON when set from env or a flag)",
    ],
    [
      rule({ kind: "price_change", threshold: 2 }),
      "rules[0].threshold: must be a number > 0 and ≤ 1 (a fraction: 0.02 = 2 %), got 2",
    ],
    [
      rule({ kind: "price_change", threshold: 0.02, clearThreshold: 0.03 }),
      "rules[0].clearThreshold: must be ≤ threshold (0.02)",
    ],
    [
      rule({ kind: "low_sources", threshold: 3, clearThreshold: 2 }),
      "rules[0].clearThreshold: must be ≥ threshold (3) for a rule that fires below it",
    ],
    [
      rule({ kind: "price_level", direction: "below", threshold: 100, clearThreshold: 99 }),
      "rules[0].clearThreshold: must be ≥ threshold (100) for a rule that fires below it",
    ],
    [
      rule({ kind: "price_level", direction: "above", threshold: 100, clearThreshold: 101 }),
      "rules[0].clearThreshold: must be ≤ threshold (100)",
    ],
    [
      rule({ kind: "low_sources", threshold: 3, overrides: { "BTC/USD": { clearThreshold: 1 } } }),
      "rules[0].overrides.BTC/USD.clearThreshold: must be ≥ threshold (3) for a rule that fires below it",
    ],
    [rule({ kind: "price_level", direction: "above" }), "rules[0].threshold: required"],
    [
      rule({ kind: "price_level", threshold: 1, direction: "up" }),
      'rules[0].direction: must be one of above, below, got "up"',
    ],
    [
      rule({ kind: "upstream_error", threshold: 0 }),
      "rules[0].threshold: must be an integer from 1 to 1000, got 0",
    ],
    [rule({ kind: "publisher_missing" }), "rules[0].publishers: required"],
    [
      rule({ kind: "stale_price", severity: "high" }),
      'rules[0].severity: must be one of info, warning, critical, got "high"',
    ],
    [
      rule({ kind: "stale_price", severity: "warnig" }),
      'rules[0].severity: must be one of info, warning, critical, got "warnig" (did you mean warning?)',
    ],
    [
      rule({ kind: "sink_error" }),
      expect.stringMatching(/^rules\[0\]\.kind: must be one of price_change, .*, got "sink_error"$/),
    ],
    [{ sinks: [{ kind: "slack" }] }, "sinks[0].url: required"],
    [
      { sinks: [{ kind: "telegram", url: "https://api.telegram.org", botToken: "1:x", chatId: 1.5 }] },
      "sinks[0].chatId: must be an integer, a string or env:NAME",
    ],
    [{ sinks: [{ kind: "slack", url: "hooks.slack.com" }] }, "sinks[0].url: must be an absolute http(s) URL"],
    [
      { sinks: [{ kind: "pagerduty", url: "https://events.pagerduty.com/v2/enqueue", routingKey: "short" }] },
      "sinks[0].routingKey: must be a 32-character integration key",
    ],
    [
      { sinks: [{ kind: "slack", url: "https://h.example.com", rules: ["nope"] }] },
      'sinks[0].rules[0]: "nope" is neither a rule kind nor a configured rule id',
    ],
    [
      { sinks: [{ kind: "slack", url: "https://h.example.com", minSeverity: "debug" }] },
      'sinks[0].minSeverity: must be one of info, warning, critical, got "debug"',
    ],
    [
      { cluster: { nats: { servers: ["nats://127.0.0.1:4222"] } } },
      "cluster.experimental: must be true to turn cluster mode on: the targets, their alert state, the event log, the notifications (grouping too) and silences are shared, but maintenance windows and the daemon's own alerts are per member, a transition still queued for the log when its member dies is decided again (later) by the new owner, and a price move across a member's kill -9 is missed by a window shorter than the gap (docs/cluster.md)",
    ],
    [{ cluster: { memberId: "a.b" } }, 'cluster.memberId: only letters, digits, "-" and "_"'],
    [{ cluster: { leaseMs: 500 } }, "cluster.leaseMs: must be an integer from 1000 to 600000: value was 500"],
  ])("%j → %s", (content, line) => {
    expect(problemLines(() => loadWith(content, bare))).toContainEqual(line);
  });

  it("lists every problem, one per line, and names the first key in details", () => {
    const error = configErrorOf(() =>
      loadWith({ server: { port: -1 }, rules: [{ kind: "x" }], sinks: [{ kind: "slack" }] }, bare),
    );
    expect(error.code).toBe("PM_ERR_CONFIG");
    expect(error.details.key).toBe("server.port");
    expect(error.message.split("\n")).toEqual([
      "invalid configuration:",
      "server.port: must be an integer from 0 to 65535: value was -1",
      expect.stringMatching(/^rules\[0\]\.kind: must be one of/),
      "sinks[0].url: required",
    ]);
  });

  it("rejects bad env values naming the key", () => {
    const lines = problemLines(() =>
      loadConfig({ ...bare, env: { PM_LOG_PRETTY: "maybe", PM_SERVER_HEARTBEAT_MS: "30s", PM_RULES: "[{" } }),
    );
    expect(lines).toEqual([
      'server.heartbeatMs: must be an integer from 1000 to 600000: value was "30s"',
      'log.pretty: must be true or false: value was "maybe"',
      "rules: must be an array (JSON when set from env or a flag)",
    ]);
  });

  it("never echoes a secret's value in a problem", () => {
    const text = configErrorOf(() =>
      loadWith({ sinks: [{ kind: "webhook", url: "https://h.example.com", secret: "tiny-secret" }] }, bare),
    ).message;
    expect(text).toContain("sinks[0].secret: must be at least 16 characters");
    expect(text).not.toContain("tiny-secret");
  });
});

describe("uniqueness", () => {
  it("rejects duplicate rule ids (id defaults to the kind)", () => {
    const lines = problemLines(() =>
      loadWith({ rules: [{ kind: "price_change" }, { kind: "price_change", windowMs: 10_000 }] }, bare),
    );
    expect(lines).toEqual([
      'rules[1].id: duplicate id "price_change" (also rules[0]); give each rule a distinct id',
    ]);
  });

  it("rejects duplicate sink names and duplicate monitors", () => {
    const lines = problemLines(() =>
      loadWith(
        {
          sinks: [
            { kind: "slack", url: "https://a.example.com" },
            { kind: "slack", url: "https://b.example.com" },
          ],
          monitors: { offchain: [{ pair: "BTC/USD" }, { pair: "btc/usd", periodMs: 2000 }] },
        },
        bare,
      ),
    );
    expect(lines).toEqual([
      "monitors.offchain[1]: duplicate of monitors.offchain[0]",
      'sinks[1].name: duplicate name "slack" (also sinks[0]); give each sink a distinct name',
    ]);
  });
});

describe("config files", () => {
  it.each([
    ["malformed JSON", "{ nope", /: invalid JSON \(/],
    ["a JSON array", "[]", /: must contain a JSON object$/],
  ])("rejects %s", (_name, text, reason) => {
    const file = writeConfig(text);
    const error = configErrorOf(() => loadConfig({ env: {}, configFile: file }));
    expect(error.details.key).toBe(file);
    expect(error.message.split("\n")[1]).toMatch(reason);
  });

  it("rejects a missing file", () => {
    const error = configErrorOf(() => loadConfig({ env: {}, configFile: "nope.json", cwd: "/tmp" }));
    expect(error.message).toBe("invalid configuration:\n/tmp/nope.json: cannot read config file (ENOENT)");
  });
});

describe("element defaults", () => {
  it("fills rule defaults per kind", () => {
    const { rules } = loadWith(
      {
        rules: [
          { kind: "price_change" },
          { kind: "stale_price", id: "stale_onchain", market: "onchain" },
          { kind: "low_sources" },
        ],
      },
      bare,
    ).config;
    expect(rules[0]).toEqual({
      kind: "price_change",
      id: "price_change",
      enabled: true,
      severity: "warning",
      threshold: 0.02,
      clearThreshold: 0.015,
      forMs: 0,
      minFiringMs: 0,
      repeatIntervalMs: 4 * 3_600_000,
      flapWindowMs: 600_000,
      flapMaxTransitions: 6,
      pairs: [],
      overrides: {},
      market: "offchain",
      windowMs: 60_000,
    });
    expect(rules[1]).toMatchObject({ id: "stale_onchain", threshold: 300_000, severity: "critical" });
    expect(rules[2]).toMatchObject({ threshold: 2, clearThreshold: 2, forMs: 10_000 });
  });

  it("normalises pairs and fills override clear thresholds", () => {
    const { rules } = loadWith(
      {
        rules: [
          {
            kind: "price_change",
            pairs: ["btc/usd", "PRAGMA"],
            overrides: { "eth/usd": { threshold: 0.05 } },
          },
        ],
      },
      bare,
    ).config;
    expect(rules[0]).toMatchObject({
      pairs: ["BTC/USD", "PRAGMA"],
      overrides: { "ETH/USD": { threshold: 0.05, clearThreshold: 0.0375 } },
    });
  });

  it.each([
    // kind, threshold, default clear: measured fractions get a 25 % band, ages/counts/levels none
    ["price_change", 0.02, 0.015],
    ["variation", 0.05, 0.0375],
    ["component_deviation", 0.005, 0.00375],
    ["onchain_offchain_deviation", 0.03, 0.0225],
    ["funding_rate", 0.001, 0.00075],
    ["vault_share_price", 0.01, 0.0075],
    ["stale_price", 60_000, 60_000],
    ["low_sources", 2, 2],
    ["upstream_error", 3, 3],
  ])("a %s rule without clearThreshold gets hysteresis by default (%d → %d)", (kind, threshold, clear) => {
    const { rules } = loadWith({ rules: [{ kind, threshold }] }, bare).config;
    expect(rules[0]).toMatchObject({ threshold, clearThreshold: clear });
  });

  it("fills sink defaults per kind", () => {
    const { sinks } = loadWith(
      {
        sinks: [
          { kind: "discord", url: "https://discord.com/api/webhooks/1/x" },
          { kind: "telegram", url: "https://api.telegram.org", botToken: "1:x", chatId: -100123 },
        ],
      },
      bare,
    ).config;
    expect(sinks[0]).toMatchObject({
      name: "discord",
      ratePerMinute: 30,
      burst: 5,
      minSeverity: "warning",
      sendResolved: true,
    });
    expect(sinks[1]).toMatchObject({ name: "telegram", chatId: "-100123", ratePerMinute: 20 });
  });

  it("validates alerts.externalLabels: Prometheus names, none of ours, non-empty values; env is JSON", () => {
    const lines = problemLines(() =>
      loadWith(
        { alerts: { externalLabels: { env: "prod", pair: "x", "2dc": "a", __x: "b", region: "" } } },
        bare,
      ),
    );
    expect(lines.join("\n")).toMatch(/^alerts\.externalLabels: .*pair/m);
    const ok = (value: unknown) => () => loadWith({ alerts: { externalLabels: value } }, bare);
    for (const bad of [{ "2dc": "a" }, { __x: "b" }, { region: "" }, { alertname: "x" }, ["env"]])
      expect(problemLines(ok(bad))[0]).toMatch(/^alerts\.externalLabels: /);
    expect(
      loadWith({ alerts: { externalLabels: { env: "prod" } } }, bare).config.alerts.externalLabels,
    ).toEqual({
      env: "prod",
    });
    const fromEnv = loadConfig({
      ...bare,
      env: { PM_ALERTS_EXTERNAL_LABELS: '{"env":"staging","region":"eu"}' },
    });
    expect(fromEnv.config.alerts.externalLabels).toEqual({ env: "staging", region: "eu" });
    expect(loadConfig({ ...bare }).config.alerts).toEqual({
      externalLabels: {},
      watchdog: { enabled: false },
      monitorStalled: { thresholdMs: 2_000 },
    });
  });

  it("validates server.externalUrl as an absolute http(s) URL or empty", () => {
    expect(problemLines(() => loadWith({ server: { externalUrl: "pm.example" } }, bare))[0]).toMatch(
      /^server\.externalUrl: /,
    );
    expect(loadWith({ server: { externalUrl: "https://pm.example/" } }, bare).config.server.externalUrl).toBe(
      "https://pm.example/",
    );
  });

  it("reads a heartbeat sink with its own keys only, and redacts its ping URLs", () => {
    const loaded = loadWith({ sinks: [{ kind: "heartbeat", url: "https://hc-ping.com/SECRET-UUID" }] }, bare);
    expect(loaded.config.sinks[0]).toEqual({
      kind: "heartbeat",
      name: "heartbeat",
      enabled: true,
      url: "https://hc-ping.com/SECRET-UUID",
      method: "GET",
      intervalMs: 60_000,
      failUrl: "",
      timeoutMs: 10_000,
      failureThreshold: 3,
    });
    expect(JSON.stringify(loaded.redacted())).not.toContain("SECRET-UUID");
    const lines = problemLines(() =>
      loadWith(
        { sinks: [{ kind: "heartbeat", url: "https://hc-ping.com/x", rules: [], failUrl: "nope" }] },
        bare,
      ),
    );
    expect(lines.some((l) => l.startsWith("sinks[0].rules: "))).toBe(true);
    expect(lines.some((l) => l.startsWith("sinks[0].failUrl: "))).toBe(true);
  });
});

describe("grouping", () => {
  const slack = (extra: object) => ({ kind: "slack", url: "https://hooks.slack.com/x", ...extra });

  it.each([
    [
      { sinks: [slack({ groupBy: ["...", "pair"] })] },
      'sinks[0].groupBy: "..." must be alone (grouping off)',
    ],
    [
      { sinks: [slack({ groupBy: ["pair-name"] })] },
      'sinks[0].groupBy: "pair-name" is not a label name ([A-Za-z_][A-Za-z0-9_]*)',
    ],
    [{ sinks: [slack({ groupBy: ["pair", "pair"] })] }, "sinks[0].groupBy: lists a label twice"],
    [
      { sinks: [slack({ groupWaitMs: -1 })] },
      "sinks[0].groupWaitMs: must be an integer from 0 to 3600000, got -1",
    ],
    [
      { sinks: [{ kind: "alertmanager", url: "http://am:9093", groupBy: ["pair"] }] },
      "sinks[0].groupBy: unknown key",
    ],
  ])("%j → %s", (content, line) => {
    expect(problemLines(() => loadWith(content, bare))).toContain(line);
  });

  it("a sink takes grouping.* for the keys it leaves out, and its own keys win", () => {
    const { config } = loadWith(
      {
        grouping: { groupBy: ["rule"], groupWaitMs: 1_000 },
        sinks: [slack({ name: "a" }), slack({ name: "b", groupBy: ["..."], groupIntervalMs: 5 })],
      },
      bare,
    );
    expect(
      config.sinks.map((s) => ("groupBy" in s ? [s.groupBy, s.groupWaitMs, s.groupIntervalMs] : [])),
    ).toEqual([
      [["rule"], 1_000, 60_000],
      [["..."], 1_000, 5],
    ]);
  });

  it("checks grouping.groupBy from the environment too", () => {
    expect(
      problemLines(() => loadWith({}, { ...bare, env: { PM_GROUPING_GROUP_BY: "pair,...,rule" } })),
    ).toEqual([expect.stringContaining('grouping.groupBy: "..." must be alone')]);
  });
});
