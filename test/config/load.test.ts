// Loading the layered configuration: defaults, bundled files, precedence, STATE_DIRECTORY and redaction.
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { defaultConfigPath, packageRoot } from "../../src/config/package-root.js";
import { configSchema } from "../../src/config/schema.js";
import { leaves } from "../../src/config/schema-node.js";
import { loadWith, problemLines, writeConfig } from "./helpers.js";

const ROOT = packageRoot();
const PROD_ENV = {
  PM_API_KEY: "live-api-key-123",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T000/B000/XXXXSECRET",
  PAGERDUTY_ROUTING_KEY: "0123456789abcdef0123456789abcdef",
};

describe("loadConfig layers", () => {
  it("loads the schema defaults alone", () => {
    const { config, sources } = loadConfig({ env: {}, defaultFile: null, cwd: "/srv/pm" });
    expect(sources).toEqual(["defaults"]);
    expect(config.upstream).toMatchObject({ url: "simulator", vaultUrl: "", apiKey: "" });
    expect(config.upstream.simulator.scenario).toBe("demo");
    expect(config.server).toMatchObject({
      host: "127.0.0.1",
      port: 8787,
      heartbeatMs: 30_000,
      maxMessageBytes: 65_536,
    });
    expect(config.monitors.offchain).toEqual([]);
    expect(config.rules).toEqual([]);
    expect(config.sinks).toEqual([]);
    expect(config.state.dir).toBe("/srv/pm/var");
    expect(config.log).toEqual({ level: "info", pretty: false });
    expect(config.shutdown.drainTimeoutMs).toBe(10_000);
  });

  it("loads config/default.json: the simulator demo", () => {
    const { config, sources } = loadConfig({ env: {}, cwd: ROOT });
    expect(sources).toEqual(["defaults", defaultConfigPath()]);
    expect(config.upstream.url).toBe("simulator");
    expect(config.monitors.offchain.map((m) => m.pair)).toEqual([
      "BTC/USD",
      "ETH/USD",
      "SOL/USD",
      "STRK/USD",
    ]);
    expect(config.monitors.offchain[0]).toEqual({
      pair: "BTC/USD",
      entryType: "spot",
      aggregation: "median",
      interval: "1s",
      expiry: null,
      periodMs: 1000,
      transport: null,
    });
    expect(config.monitors.onchain.map((m) => [m.pair, m.network, m.periodMs])).toEqual([
      ["BTC/USD", "starknet-mainnet", 5000],
      ["ETH/USD", "starknet-mainnet", 5000],
    ]);
    expect(config.monitors.vaults).toEqual([{ id: "pragma-btc-vault", periodMs: 15_000 }]);
    expect(config.rules.map((r) => r.id)).toContain("price_change_10s");
    expect(new Set(config.rules.map((r) => r.kind))).toEqual(
      new Set([
        "price_change",
        "stale_price",
        "low_sources",
        "component_deviation",
        "onchain_offchain_deviation",
        "publisher_stale",
        "funding_rate",
        "vault_status",
        "vault_share_price",
        "upstream_error",
        "upstream_down",
        "publisher_outage",
        "source_deviation",
        "market_move",
      ]),
    );
    expect(config.rules.find((r) => r.kind === "upstream_error")?.threshold).toBe(3);
    expect(config.sinks).toEqual([]);
    expect(config.state.dir).toBe(resolve(ROOT, "var"));
  });

  it("validates the production example when its env vars are set", () => {
    const { config, redacted } = loadConfig({
      env: PROD_ENV,
      cwd: ROOT,
      configFile: "config/production.example.json",
    });
    expect(config.upstream.url).toBe("https://pragma-api.invalid");
    expect(config.upstream.apiKey).toBe(PROD_ENV.PM_API_KEY);
    expect(config.monitors.vaults).toEqual([]);
    expect(config.sinks.map((s) => [s.kind, s.name])).toEqual([
      ["slack", "slack-oncall"],
      ["pagerduty", "pagerduty"],
    ]);
    expect(config.sinks[0]).toMatchObject({ url: PROD_ENV.SLACK_WEBHOOK_URL, ratePerMinute: 60 });
    expect(config.sinks[1]).toMatchObject({ routingKey: PROD_ENV.PAGERDUTY_ROUTING_KEY });
    const shown = JSON.stringify(redacted());
    for (const secret of Object.values(PROD_ENV)) expect(shown).not.toContain(secret);
  });

  it("ships hysteresis and its own state dir in the production example", () => {
    const { config } = loadConfig({ env: PROD_ENV, cwd: ROOT, configFile: "config/production.example.json" });
    // sharing the demo's ./var made a production start resolve the demo's vault alerts
    expect(config.state.dir).toBe("/var/lib/pragma-monitor");
    const demo = loadConfig({ env: {}, cwd: ROOT });
    expect(config.state.dir).not.toBe(demo.config.state.dir);
  });

  it.each(["config/default.json", "config/production.example.json"])(
    "%s: every rule on a measured fraction resolves below its fire threshold (no flapping at it)",
    (file) => {
      const { config } = loadConfig({ env: PROD_ENV, cwd: ROOT, configFile: file });
      const banded = new Set([
        "price_change",
        "variation",
        "component_deviation",
        "onchain_offchain_deviation",
        "funding_rate",
        "vault_share_price",
      ]);
      const rules = config.rules.filter((r) => banded.has(r.kind));
      expect(rules.length).toBeGreaterThan(0);
      for (const r of rules) {
        expect(r.clearThreshold, r.id).toBeLessThan(r.threshold);
        for (const [key, o] of Object.entries(r.overrides))
          expect(o.clearThreshold ?? 0, `${r.id} ${key}`).toBeLessThan(o.threshold ?? 0);
      }
    },
  );

  it("names the missing env vars of the production example", () => {
    const lines = problemLines(() =>
      loadConfig({ env: {}, cwd: ROOT, configFile: "config/production.example.json" }),
    );
    expect(lines).toEqual([
      "sinks[0].url: environment variable SLACK_WEBHOOK_URL is not set",
      "sinks[1].routingKey: environment variable PAGERDUTY_ROUTING_KEY is not set",
    ]);
  });

  it("applies default.json < --config file < env < flags", () => {
    const file = writeConfig({ server: { port: 9000, heartbeatMs: 5000 }, log: { level: "debug" } });
    const only = (extra: object) => loadConfig({ env: {}, configFile: file, ...extra }).config;
    expect(only({}).server).toMatchObject({ port: 9000, heartbeatMs: 5000 });
    expect(only({}).monitors.offchain).toHaveLength(4); // default.json still applies below the file
    expect(only({ env: { PM_SERVER_PORT: "9100" } }).server).toMatchObject({ port: 9100, heartbeatMs: 5000 });
    const all = loadConfig({
      env: { PM_SERVER_PORT: "9100", PM_LOG_LEVEL: "warn" },
      configFile: file,
      argvOverrides: { "server.port": "0" },
    });
    expect(all.config.server.port).toBe(0);
    expect(all.config.log.level).toBe("warn");
    expect(all.sources).toEqual([
      "defaults",
      defaultConfigPath(),
      file,
      "env (PM_SERVER_PORT, PM_LOG_LEVEL)",
      "flags (server.port)",
    ]);
  });

  it("replaces arrays rather than merging them, and reads arrays from env and flags as JSON", () => {
    expect(loadWith({ rules: [{ kind: "vault_status" }] }).config.rules.map((r) => r.id)).toEqual([
      "vault_status",
    ]);
    const env = { PM_MONITORS_VAULTS: '[{"id":"v1"}]' };
    expect(loadConfig({ env }).config.monitors.vaults).toEqual([{ id: "v1", periodMs: 60_000 }]);
    const flags = { "monitors.vaults": '[{"id":"v2","periodMs":1000}]' };
    expect(loadConfig({ env, argvOverrides: flags }).config.monitors.vaults).toEqual([
      { id: "v2", periodMs: 1000 },
    ]);
  });

  it("coerces env text strictly", () => {
    const { config } = loadConfig({
      env: { PM_LOG_PRETTY: "0", PM_MONITORS_JITTER: "0.25", PM_SIMULATOR_API_KEYS: "a, b" },
    });
    expect(config.log.pretty).toBe(false);
    expect(config.monitors.jitter).toBe(0.25);
    expect(config.upstream.simulator.apiKeys).toEqual(["a", "b"]);
  });

  it("returns a deeply frozen config", () => {
    const { config } = loadConfig({ env: {} });
    expect(Object.isFrozen(config.server)).toBe(true);
    expect(Object.isFrozen(config.rules[0])).toBe(true);
  });
});

describe("state.dir and STATE_DIRECTORY", () => {
  const cwd = "/srv/pm";
  it("honours $STATE_DIRECTORY when state.dir is not set explicitly", () => {
    const loaded = loadConfig({ env: { STATE_DIRECTORY: "/var/lib/pragma-monitor:/var/lib/other" }, cwd });
    expect(loaded.config.state.dir).toBe("/var/lib/pragma-monitor");
    expect(loaded.sources).toContain("env (STATE_DIRECTORY)");
  });

  it.each([
    ["PM_STATE_DIR", { env: { STATE_DIRECTORY: "/sd", PM_STATE_DIR: "/explicit" } }, "/explicit"],
    ["a flag", { env: { STATE_DIRECTORY: "/sd" }, argvOverrides: { "state.dir": "data" } }, "/srv/pm/data"],
    [
      "the --config file",
      { env: { STATE_DIRECTORY: "/sd" }, configFile: writeConfig({ state: { dir: "/from-file" } }) },
      "/from-file",
    ],
  ])("prefers state.dir set by %s", (_name, options, expected) => {
    expect(loadConfig({ cwd, ...options }).config.state.dir).toBe(expected);
  });
});

describe("redacted()", () => {
  it("replaces every secret, including schema keys marked sensitive and sink secrets", () => {
    const secrets = {
      PM_API_KEY: "api-secret-1",
      PM_SERVER_TOKEN: "token-secret-2",
      PM_SERVER_METRICS_TOKEN: "scrape-secret-8",
      PM_SIMULATOR_API_KEYS: "sim-secret-3",
      TG_TOKEN: "123456:tg-secret-4",
      HOOK_SECRET: "hook-secret-5-long-enough",
      PM_CLUSTER_NATS_USER: "nats-user-9",
      PM_CLUSTER_NATS_PASSWORD: "nats-pw-10",
      PM_CLUSTER_NATS_TOKEN: "nats-token-11",
    };
    const { config, redacted } = loadWith(
      {
        upstream: { vaultUrl: "https://user:pw-secret-6@vaults.example.com" },
        sinks: [
          { kind: "discord", url: "https://discord.com/api/webhooks/1/dc-secret-7" },
          { kind: "telegram", url: "https://api.telegram.org", botToken: "env:TG_TOKEN", chatId: "-100123" },
          { kind: "webhook", url: "https://hooks.example.com/in", secret: "env:HOOK_SECRET" },
        ],
      },
      { env: secrets },
    );
    expect(config.server.token).toBe("token-secret-2");
    const shown = redacted();
    const text = JSON.stringify(shown);
    for (const secret of [
      "secret-1",
      "secret-2",
      "secret-3",
      "secret-4",
      "secret-5",
      "pw-secret-6",
      "secret-7",
      "secret-8",
      "nats-user-9",
      "nats-pw-10",
      "nats-token-11",
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain("[redacted]");
    expect(shown).toMatchObject({ upstream: { vaultUrl: "https://user:[redacted]@vaults.example.com/" } });
    expect(text).toContain("https://api.telegram.org"); // not a secret
    const sensitiveKeys = leaves(configSchema)
      .filter(([, leaf]) => leaf.sensitive === true)
      .map(([key]) => key);
    expect(sensitiveKeys).toEqual([
      "upstream.apiKey",
      "upstream.simulator.apiKeys",
      "server.token",
      "server.metricsToken",
      "cluster.nats.user",
      "cluster.nats.password",
      "cluster.nats.token",
    ]);
  });

  it("leaves unset secrets empty so the output shows they are unset", () => {
    const shown = loadConfig({ env: {} }).redacted() as { upstream: { apiKey: string } };
    expect(shown.upstream.apiKey).toBe("");
  });
});
