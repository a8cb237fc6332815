// Element reader for the `sinks` array: chat-ops hooks with filters, rate limits and secrets from env.
import { SEVERITIES } from "../domain/events.js";
import type { AlertSinkKind, HeartbeatSinkConfig, SinkCommonConfig, SinkConfig, SinkKind } from "./types.js";
import type { ElementReader } from "./element-reader.js";
import { readElements, reportDuplicates, type ReaderContext } from "./element-reader.js";
import { httpUrlProblem, ID_PATTERN, normalisePair, PAIR_PATTERN } from "./checks.js";

interface SinkKindDefaults {
  readonly ratePerMinute: number;
  readonly burst: number;
  /** Where the real service lives (documentation only: url has no default). */
  readonly urlDoc: string;
}

/** Rate limits respect each service's published limits. */
export const SINK_DEFAULTS: Readonly<Record<AlertSinkKind, SinkKindDefaults>> = {
  slack: {
    ratePerMinute: 60,
    burst: 3,
    urlDoc:
      "Incoming-webhook URL, https://hooks.slack.com/services/T…/B…/… (Slack allows ~1 message/s per webhook).",
  },
  discord: {
    ratePerMinute: 30,
    burst: 5,
    urlDoc: "Webhook URL, https://discord.com/api/webhooks/{id}/{token} (5 requests / 2 s per webhook).",
  },
  telegram: {
    ratePerMinute: 20,
    burst: 3,
    urlDoc: "Bot API base URL, https://api.telegram.org (20 messages/min per group).",
  },
  pagerduty: {
    ratePerMinute: 120,
    burst: 10,
    urlDoc: "Events API v2 endpoint, https://events.pagerduty.com/v2/enqueue (or events.eu.pagerduty.com).",
  },
  alertmanager: {
    ratePerMinute: 60,
    burst: 10,
    urlDoc: "Alertmanager base URL, e.g. http://alertmanager:9093 (alerts are POSTed to /api/v2/alerts).",
  },
  webhook: { ratePerMinute: 120, burst: 10, urlDoc: "Receiver URL; bodies are signed with HMAC-SHA256." },
};

/** Sink kinds, in documentation order: the alert sinks, then the heartbeat. */
export const SINK_KINDS: readonly SinkKind[] = [
  ...(Object.keys(SINK_DEFAULTS) as AlertSinkKind[]),
  "heartbeat",
];

/** Read the `sinks` array; names must be unique (default = kind). */
export function readSinks(raw: unknown, path: string, ctx: ReaderContext): SinkConfig[] {
  const sinks = readElements(raw, path, ctx, readSink).filter((s): s is SinkConfig => s !== undefined);
  reportDuplicates(
    sinks,
    path,
    ctx,
    (s) => s.name,
    ".name",
    (name, first) => `duplicate name "${name}" (also ${first}); give each sink a distinct name`,
  );
  return sinks;
}

/** Read one sink element (undefined when its kind is unusable, after reporting it). */
export function readSink(r: ElementReader): SinkConfig | undefined {
  const kind = r.oneOf("kind", SINK_KINDS, { doc: "Sink kind." });
  if (!r.isObject || !SINK_KINDS.includes(r.peek("kind") as SinkKind)) {
    r.abandon(); // the element's other keys cannot be judged without a valid kind
    return undefined;
  }
  if (kind === "heartbeat") return readHeartbeat(r);
  const common = readCommon(r, kind);
  const url = r.secret("url", {
    doc: `${SINK_DEFAULTS[kind].urlDoc} May be env:NAME.`,
    check: httpUrlProblem,
  });
  switch (kind) {
    case "slack":
    case "discord":
      return { kind, ...common, url };
    case "telegram":
      return {
        kind,
        ...common,
        url,
        botToken: r.secret("botToken", { doc: "Bot token from @BotFather (secret; use env:NAME)." }),
        chatId: readChatId(r),
      };
    case "pagerduty":
      return {
        kind,
        ...common,
        url,
        routingKey: r.secret("routingKey", {
          doc: "Events v2 integration (routing) key, 32 characters (secret; use env:NAME).",
          check: (s) => (/^[A-Za-z0-9]{32}$/.test(s) ? undefined : "must be a 32-character integration key"),
        }),
      };
    case "alertmanager":
      return {
        kind,
        ...common,
        url,
        resendIntervalMs: r.int("resendIntervalMs", {
          doc: "Re-send firing alerts this often so Alertmanager keeps them active (ms).",
          default: 60_000,
          min: 1_000,
          max: 3_600_000,
        }),
      };
    case "webhook":
      return {
        kind,
        ...common,
        url,
        secret: r.secret("secret", {
          doc: "HMAC-SHA256 signing key, ≥ 16 characters (secret; use env:NAME).",
          check: (s) => (s.length >= 16 ? undefined : "must be at least 16 characters"),
        }),
      };
  }
}

/** A heartbeat element: a ping URL and its schedule; no alert filters (it never carries alerts). */
function readHeartbeat(r: ElementReader): HeartbeatSinkConfig {
  return {
    kind: "heartbeat",
    name: r.string("name", {
      doc: "Unique sink name (metrics label, sink_error label).",
      default: "heartbeat",
      pattern: ID_PATTERN,
      expected: "a name (letters, digits, _ - .)",
    }),
    enabled: r.bool("enabled", { doc: "Whether the heartbeat pings.", default: true }),
    url: r.secret("url", {
      doc: "Pinged every intervalMs while the daemon itself works (a failing upstream or sink does not stop it), e.g. https://hc-ping.com/<uuid> or a PagerDuty/Cronitor/Uptime Kuma push URL (a secret; may be env:NAME).",
      check: httpUrlProblem,
    }),
    method: r.oneOf("method", ["GET", "HEAD", "POST"] as const, {
      doc: "HTTP method of the ping (POST sends an empty body).",
      default: "GET",
    }),
    intervalMs: r.int("intervalMs", {
      doc: "Time between pings (ms); set the service's period to this and its grace to about twice it.",
      default: 60_000,
      min: 1_000,
      max: 86_400_000,
    }),
    failUrl: r.secret("failUrl", {
      doc: 'Pinged instead of url while the daemon itself does not work (not listening, pipeline stopped, a target not yet polled; a failing upstream or sink does not count), e.g. https://hc-ping.com/<uuid>/fail ("" = send nothing then, and the service alerts after its grace time).',
      default: "",
      check: (s) => (s === "" ? undefined : httpUrlProblem(s)),
    }),
    timeoutMs: r.int("timeoutMs", { doc: "Per-ping timeout (ms).", default: 10_000, min: 100, max: 120_000 }),
    failureThreshold: r.int("failureThreshold", {
      doc: "Consecutive failed pings that raise a sink_error alert (401/403/404/410 raise it at once).",
      default: 3,
      min: 1,
      max: 1_000,
    }),
  };
}

/** Telegram chat ids are often written as JSON numbers; accept those as well as strings and env:NAME. */
function readChatId(r: ElementReader): string {
  const doc = "Chat id (e.g. -1001234567890) or @channelname; a number, a string or env:NAME.";
  if (typeof r.peek("chatId") === "number") {
    return String(r.int("chatId", { doc, min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }));
  }
  return r.secret("chatId", {
    doc,
    check: (s) => (/^(-?\d+|@\w+)$/.test(s) ? undefined : "must be a numeric chat id or @channel"),
  });
}

function readCommon(r: ElementReader, kind: AlertSinkKind): SinkCommonConfig {
  const d = SINK_DEFAULTS[kind];
  return {
    name: r.string("name", {
      doc: "Unique sink name (metrics label, outbox file).",
      default: kind,
      pattern: ID_PATTERN,
      expected: "a name (letters, digits, _ - .)",
    }),
    enabled: r.bool("enabled", { doc: "Whether the sink delivers.", default: true }),
    rules: r.stringList("rules", {
      doc: "Only these rule kinds or ids; [] = all.",
      item: (s, at) => ruleRef(r, s, at),
    }),
    pairs: r.stringList("pairs", {
      doc: "Only alerts on these pairs; [] = all.",
      item: (s, at) =>
        PAIR_PATTERN.test(s) ? normalisePair(s) : ctxProblem(r, at, "must be LETTERS/LETTERS"),
    }),
    labels: r.stringRecord("labels", {
      doc: 'Only alerts whose labels have these values, e.g. {"market":"onchain"}.',
    }),
    minSeverity: r.oneOf("minSeverity", SEVERITIES, {
      doc: "Lowest severity delivered.",
      default: "warning",
    }),
    sendResolved: r.bool("sendResolved", { doc: "Also deliver resolutions.", default: true }),
    ratePerMinute: r.int("ratePerMinute", {
      doc: "Token bucket: sustained messages/min.",
      default: d.ratePerMinute,
      min: 1,
      max: 6_000,
    }),
    burst: r.int("burst", { doc: "Token bucket size.", default: d.burst, min: 1, max: 1_000 }),
    timeoutMs: r.int("timeoutMs", {
      doc: "Per-request timeout (ms).",
      default: 10_000,
      min: 100,
      max: 120_000,
    }),
    maxAgeMs: r.int("maxAgeMs", {
      doc: "Undelivered messages older than this go to the dead-letter file (ms).",
      default: 86_400_000,
      min: 1_000,
      max: 30 * 86_400_000,
    }),
    failureThreshold: r.int("failureThreshold", {
      doc: "Consecutive failed deliveries that raise a sink_error alert.",
      default: 5,
      min: 1,
      max: 1_000,
    }),
  };
}

function ruleRef(r: ElementReader, name: string, at: string): string | undefined {
  if (ID_PATTERN.test(name)) return name;
  return ctxProblem(r, at, "must be a rule kind or id");
}

function ctxProblem(r: ElementReader, at: string, reason: string): undefined {
  r.ctx.problems.push({ key: at, reason });
  return undefined;
}
