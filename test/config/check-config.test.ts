// `pragma-monitor check-config` and the shared --config/--set parser: exit codes 0/64/78 and messages.
import { describe, expect, it } from "vitest";
import { EX_CONFIG, EX_USAGE, parseConfigArgs } from "../../src/cli/args.js";
import { runCheckConfig } from "../../src/cli/check-config.js";
import { packageRoot } from "../../src/config/package-root.js";
import { writeConfig } from "./helpers.js";

function run(argv: readonly string[], env: Record<string, string | undefined> = {}) {
  let stdout = "";
  let stderr = "";
  const code = runCheckConfig(argv, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    env,
    cwd: packageRoot(),
  });
  return { code, stdout, stderr };
}

/** The warm-up note of the shipped config: its windows (10 s, 1 min) are no longer than a 1min close spacing. */
const SHIPPED_NOTE =
  "note: 4 off-chain target(s) not warmed from 1min candles (no window of their rules (10s, 1min) is longer than the " +
  "1min between two closes: a window's own polls serve it a window after they start, so closes would add verdicts " +
  "for at most one close spacing); their history fills from their own data: offchain:BTC/USD:spot:median:1s " +
  "(monitors.offchain[0]), offchain:ETH/USD:spot:median:1s (monitors.offchain[1]), offchain:SOL/USD:spot:median:1s " +
  "(monitors.offchain[2]), offchain:STRK/USD:spot:median:1s (monitors.offchain[3])";

describe("check-config", () => {
  it("prints the effective config with secrets redacted and exits 0", () => {
    const result = run(["--set", "server.port=0", "--set=log.level=debug"], {
      PM_SERVER_TOKEN: "s3cret-token",
    });
    expect(result.code).toBe(0);
    const config = JSON.parse(result.stdout) as {
      server: { port: number; token: string };
      log: { level: string };
    };
    expect(config.server).toMatchObject({ port: 0, token: "[redacted]" });
    expect(config.log.level).toBe("debug");
    expect(result.stdout).not.toContain("s3cret-token");
    expect(result.stderr.split("\n")).toEqual([
      SHIPPED_NOTE,
      expect.stringMatching(
        /^configuration OK \(defaults < .*default\.json < env \(PM_SERVER_TOKEN\) < flags.*$/,
      ),
      "",
    ]);
  });

  it("warns, and still exits 0, when bound to a non-loopback address without tokens", () => {
    const open = run(["--set", "server.host=0.0.0.0"]);
    expect(open.code).toBe(0);
    const warnings = open.stderr.split("\n").filter((line) => line.startsWith("warning: "));
    expect(warnings).toEqual([
      expect.stringMatching(/^warning: server\.token: unset while bound to non-loopback 0\.0\.0\.0: /),
      expect.stringMatching(/^warning: server\.metricsToken: unset while bound to non-loopback 0\.0\.0\.0: /),
    ]);
    const guarded = run(["--set", "server.host=0.0.0.0"], {
      PM_SERVER_TOKEN: "t",
      PM_SERVER_METRICS_TOKEN: "m",
    });
    expect(guarded.stderr).not.toContain("warning:");
    expect(guarded.stdout).not.toMatch(/"(t|m)"/);
    for (const host of ["127.0.0.1", "localhost", "::1"])
      expect(run(["--set", `server.host=${host}`]).stderr).not.toContain("warning:");
  });

  it("refuses an allowedOrigins entry that is not an origin", () => {
    const result = run([], {
      PM_SERVER_ALLOWED_ORIGINS: "https://ok.example.com,https://x.example.com/path",
    });
    expect(result.code).toBe(EX_CONFIG);
    expect(result.stderr).toContain("server.allowedOrigins: must be a list of origins");
    const ok = run([], {
      PM_SERVER_ALLOWED_ORIGINS: "https://ok.example.com, *",
      PM_SERVER_ALLOWED_HOSTS: "mon.example.com",
    });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      server: { allowedOrigins: ["https://ok.example.com", "*"], allowedHosts: ["mon.example.com"] },
    });
  });

  it("validates the production example", () => {
    const env = {
      PM_API_KEY: "k",
      SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T/B/X",
      PAGERDUTY_ROUTING_KEY: "0123456789abcdef0123456789abcdef",
    };
    expect(run(["--config", "config/production.example.json"], env).code).toBe(0);
  });

  it("lists each problem as key: reason on stderr and exits 78", () => {
    const file = writeConfig({
      rules: [{ kind: "price_change", id: "a", treshold: 0.02 }],
      server: { port: 99999 },
    });
    const result = run(["-c", file, "--set", "log.level=loud"]);
    expect(result.code).toBe(EX_CONFIG);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")).toEqual([
      "pragma-monitor: invalid configuration (3 problems):",
      "  server.port: must be an integer from 0 to 65535: value was 99999",
      '  log.level: must be one of the possible values: ["fatal","error","warn","info","debug","trace"]: value was "loud"',
      "  rules[0].treshold: unknown key (did you mean threshold?)",
      "",
    ]);
  });

  it("exits 78 on a malformed config file, naming the file", () => {
    const file = writeConfig('{"server": {');
    const result = run(["--config", file]);
    expect(result.code).toBe(EX_CONFIG);
    expect(result.stderr).toContain(`  ${file}: invalid JSON (`);
  });

  it.each([[["--bogus"]], [["--set", "noequals"]], [["extra"]], [["--config"]]])(
    "exits 64 on bad usage %j",
    (argv) => {
      const result = run(argv);
      expect(result.code).toBe(EX_USAGE);
      expect(result.stderr).toContain("usage: pragma-monitor check-config");
    },
  );

  it("prints usage with --help", () => {
    expect(run(["--help"])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("--set KEY=VALUE") as string,
    });
  });
});

describe("parseConfigArgs", () => {
  it("collects --config and repeated --set (last wins)", () => {
    expect(
      parseConfigArgs(["--config=a.json", "--set", "x.y=1", "--set", "x.y=2", "--set", "rules=[]"]),
    ).toEqual({
      ok: true,
      value: { configFile: "a.json", overrides: { "x.y": "2", rules: "[]" }, help: false },
    });
  });

  it("keeps '=' inside the value", () => {
    const parsed = parseConfigArgs(["--set", "upstream.url=http://h/?a=b"]);
    expect(parsed.ok && parsed.value.overrides).toEqual({ "upstream.url": "http://h/?a=b" });
  });
});

describe("check-config and the live server's stricter rules", () => {
  it.each([
    [
      { aggregation: "twap", interval: "5s" },
      "interval: upstream rejects interval 5s with aggregation twap (400",
    ],
    [
      { aggregation: "twap", interval: "10s" },
      "interval: upstream rejects interval 10s with aggregation twap",
    ],
    [{ aggregation: "twap", interval: "1w" }, "interval: upstream rejects interval 1w with aggregation twap"],
    [
      { aggregation: "median", interval: "5min" },
      "interval: upstream rejects interval 5min with aggregation median",
    ],
    [
      { entryType: "future", expiry: "2026-12-25" },
      "expiry: upstream accepts only YYYY-MM-DDTHH:MM:SS in UTC",
    ],
    [
      { entryType: "future", expiry: "2026-12-25T09:00:00+01:00" },
      'expiry: upstream accepts only YYYY-MM-DDTHH:MM:SS in UTC, without zone or fraction (else 400 Invalid expiry) (in UTC: "2026-12-25T08:00:00")',
    ],
    [{ entryType: "future", expiry: "2026-12-25T08:00:00Z" }, "expiry: upstream accepts only"],
  ])("monitors.offchain %j → 78 with the reason", (fields, reason) => {
    const result = run([
      "--set",
      "server.port=0",
      "--set",
      `monitors.offchain=${JSON.stringify([{ pair: "BTC/USD", ...fields }])}`,
    ]);
    expect(result.code).toBe(EX_CONFIG);
    expect(result.stderr).toContain(`monitors.offchain[0].${reason}`);
  });

  it("monitors.onchain twap → 78 with the reason", () => {
    const onchain = JSON.stringify([{ pair: "BTC/USD", aggregation: "twap" }]);
    const result = run(["--set", "server.port=0", "--set", `monitors.onchain=${onchain}`]);
    expect(result.code).toBe(EX_CONFIG);
    expect(result.stderr).toContain(
      "monitors.onchain[0].aggregation: upstream has no on-chain twap (500 on every request); use median",
    );
  });

  it.each(["2h", "1w", "5s", "1s", "100ms", "5min"])(
    "monitors.warmup.interval %s → 78 with the reason",
    (interval) => {
      const result = run(["--set", "server.port=0", "--set", `monitors.warmup.interval=${interval}`]);
      expect(result.code).toBe(EX_CONFIG);
      expect(result.stderr).toContain(
        `monitors.warmup.interval: must be one of 10s, 1min, 15min, 1h, 1d: upstream has no ${interval} candles`,
      );
    },
  );

  it("accepts the forms the live server serves, and says what it adapts (twap without components, no warm-up)", () => {
    const monitors = [
      { pair: "BTC/USD", aggregation: "twap", interval: "1h" },
      { pair: "BTC/USD", entryType: "future", expiry: "2026-12-25T08:00:00" },
    ];
    const result = run([
      "--set",
      "server.port=0",
      "--set",
      "monitors.warmup.interval=15min",
      "--set",
      `monitors.offchain=${JSON.stringify(monitors)}`,
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      "note: monitors.offchain[0]: BTC/USD twap is polled without components (upstream fails twap with components: 500)",
    );
    // one line for both: the twap and the future target are not spot medians
    expect(result.stderr).toMatch(
      /^note: 2 off-chain target\(s\) not warmed from 15min candles \(upstream candles are spot medians, these targets are not\); their history fills from their own data: offchain:BTC\/USD:spot:twap:1h \(monitors\.offchain\[0\]\), offchain:BTC\/USD:future:median:\S+ \(monitors\.offchain\[1\]\)$/m,
    );
  });

  it("says in one line that the shipped windows leave the shipped targets unwarmed, and nothing once a window is long enough", () => {
    const shipped = run(["--set", "server.port=0"]);
    expect(shipped.code).toBe(0);
    const notes = shipped.stderr.split("\n").filter((line) => line.includes("not warmed"));
    expect(notes).toEqual([SHIPPED_NOTE]);
    // 2 min: served by 1min closes half the time of its first 2 min
    const rules = JSON.stringify([{ kind: "price_change", windowMs: 120_000, threshold: 0.05 }]);
    const long = run(["--set", "server.port=0", "--set", `rules=${rules}`]);
    expect(long.code).toBe(0);
    expect(long.stderr).not.toContain("not warmed");
  });

  it("says why each monitor that asks to stream is polled instead, and nothing for those that stream", () => {
    const monitors = [
      { pair: "BTC/USD" },
      { pair: "ETH/USD", aggregation: "twap", interval: "1h" },
      { pair: "BTC/USD", entryType: "perp" },
      { pair: "SOL/USD", transport: "poll" },
    ];
    const result = run([
      "--set",
      "server.port=0",
      "--set",
      "upstream.transport=stream",
      "--set",
      `monitors.offchain=${JSON.stringify(monitors)}`,
    ]);
    expect(result.code).toBe(0);
    const notes = result.stderr.split("\n").filter((line) => line.includes("is polled: "));
    expect(notes).toEqual([
      "note: monitors.offchain[1]: ETH/USD spot twap is polled: the SSE stream serves median only (upstream sends its error event for twap)",
      "note: monitors.offchain[2]: BTC/USD perp median is polled: the SSE stream serves spot entries only, not perp",
    ]);
  });

  it("refuses a transport that is neither poll nor stream", () => {
    const result = run([
      "--set",
      "server.port=0",
      "--set",
      `monitors.offchain=${JSON.stringify([{ pair: "BTC/USD", transport: "push" }])}`,
    ]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("monitors.offchain[0].transport: must be null or one of poll, stream");
  });
});
