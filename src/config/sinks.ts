// The `sinks` array elements (chat-ops hooks and the heartbeat): schemas with per-service defaults, and types.
import { z } from "zod";
import { SEVERITIES } from "../domain/events.js";
import { groupByProblem, httpUrlProblem, ID_PATTERN, normalisePair, PAIR_PATTERN } from "./checks.js";
import { parseArray, parseKinded, reportDuplicates, type KindSchemas } from "./elements.js";
import type { ConfigProblem } from "./problems.js";
import {
  bool,
  element,
  int,
  list,
  listItem,
  oneOf,
  secret,
  stringRecord,
  text,
  type EnvRecord,
} from "./fields.js";

interface SinkKindDefaults {
  readonly ratePerMinute: number;
  readonly burst: number;
  /** Where the real service lives (documentation only: url has no default). */
  readonly urlDoc: string;
}

/** Rate limits respect each service's published limits. */
const SINK_DEFAULTS = {
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
} as const satisfies Record<string, SinkKindDefaults>;

type AlertKind = keyof typeof SINK_DEFAULTS;

/** Keys every alert sink shares: routing filters, rate limit and delivery policy. */
function commonShape<K extends AlertKind>(env: EnvRecord, kind: K) {
  const d: SinkKindDefaults = SINK_DEFAULTS[kind];
  return {
    kind: z.literal(kind),
    name: text({
      doc: "Unique sink name (metrics label, outbox file).",
      default: kind,
      pattern: ID_PATTERN,
      expected: "a name (letters, digits, _ - .)",
    }),
    enabled: bool({ doc: "Whether the sink delivers.", default: true }),
    rules: list(
      listItem((s) => (ID_PATTERN.test(s) ? undefined : "must be a rule kind or id")),
      { doc: "Only these rule kinds or ids; [] = all." },
    ),
    pairs: list(
      listItem((s) => (PAIR_PATTERN.test(s) ? undefined : "must be LETTERS/LETTERS")).transform(
        normalisePair,
      ),
      { doc: "Only alerts on these pairs; [] = all." },
    ),
    labels: stringRecord({ doc: 'Only alerts whose labels have these values, e.g. {"market":"onchain"}.' }),
    minSeverity: oneOf(SEVERITIES, { doc: "Lowest severity delivered.", default: "warning" }),
    sendResolved: bool({ doc: "Also deliver resolutions.", default: true }),
    ratePerMinute: int({
      doc: "Token bucket: sustained messages/min.",
      default: d.ratePerMinute,
      min: 1,
      max: 6_000,
    }),
    burst: int({ doc: "Token bucket size.", default: d.burst, min: 1, max: 1_000 }),
    timeoutMs: int({ doc: "Per-request timeout (ms).", default: 10_000, min: 100, max: 120_000 }),
    maxAgeMs: int({
      doc: "Undelivered messages older than this go to the dead-letter file (ms).",
      default: 86_400_000,
      min: 1_000,
      max: 30 * 86_400_000,
    }),
    failureThreshold: int({
      doc: "Consecutive failed deliveries that raise a sink_error alert.",
      default: 5,
      min: 1,
      max: 1_000,
    }),
    url: secret(env, { doc: `${d.urlDoc} May be env:NAME.`, check: httpUrlProblem }),
  };
}

/** The top-level `grouping` defaults a sink's grouping keys take when it leaves them out. */
export interface GroupingDefaults {
  readonly groupBy: readonly string[];
  readonly groupWaitMs: number;
  readonly groupIntervalMs: number;
  readonly repeatIntervalMs: number;
}

/** Built-in grouping defaults (those of the `grouping` section; used when a caller passes none). */
export const GROUPING_DEFAULTS: GroupingDefaults = {
  groupBy: [],
  groupWaitMs: 5_000,
  groupIntervalMs: 60_000,
  repeatIntervalMs: 14_400_000,
};

/** Grouping keys of the sinks that group (every alert sink but alertmanager): absent ones take `grouping.*`. */
function groupingShape() {
  return {
    groupBy: list(listItem(), {
      doc: 'Labels whose values make a group (`rule` and `severity` count as labels); [] = one group for everything this sink receives; ["..."] = grouping off.',
      defaultText: "grouping.groupBy",
      check: groupByProblem,
    }),
    groupWaitMs: int({
      doc: "A new group waits this long before its first notification (ms).",
      defaultText: "grouping.groupWaitMs",
      default: GROUPING_DEFAULTS.groupWaitMs,
      min: 0,
      max: 3_600_000,
    }),
    groupIntervalMs: int({
      doc: "A group that notified waits this long before notifying what changed (ms).",
      defaultText: "grouping.groupIntervalMs",
      default: GROUPING_DEFAULTS.groupIntervalMs,
      min: 0,
      max: 86_400_000,
    }),
    repeatIntervalMs: int({
      doc: "A group still firing with nothing new is notified again after this long (ms); 0 = never.",
      defaultText: "grouping.repeatIntervalMs",
      default: GROUPING_DEFAULTS.repeatIntervalMs,
      min: 0,
      max: 604_800_000,
    }),
  };
}

/** The heartbeat: a ping URL and its schedule; no alert filters (it never carries alerts). */
function heartbeatShape(env: EnvRecord) {
  return {
    kind: z.literal("heartbeat"),
    name: text({
      doc: "Unique sink name (metrics label, sink_error label).",
      default: "heartbeat",
      pattern: ID_PATTERN,
      expected: "a name (letters, digits, _ - .)",
    }),
    enabled: bool({ doc: "Whether the heartbeat pings.", default: true }),
    url: secret(env, {
      doc: "Pinged every intervalMs while the daemon itself works (a failing upstream or sink does not stop it), e.g. https://hc-ping.com/<uuid> or a PagerDuty/Cronitor/Uptime Kuma push URL (a secret; may be env:NAME).",
      check: httpUrlProblem,
    }),
    method: oneOf(["GET", "HEAD", "POST"], {
      doc: "HTTP method of the ping (POST sends an empty body).",
      default: "GET",
    }),
    intervalMs: int({
      doc: "Time between pings (ms); set the service's period to this and its grace to about twice it.",
      default: 60_000,
      min: 1_000,
      max: 86_400_000,
    }),
    failUrl: secret(env, {
      doc: 'Pinged instead of url while the daemon itself does not work (not listening, pipeline stopped, a target not yet polled; a failing upstream or sink does not count), e.g. https://hc-ping.com/<uuid>/fail ("" = send nothing then, and the service alerts after its grace time).',
      default: "",
      check: (s) => (s === "" ? undefined : httpUrlProblem(s)),
    }),
    timeoutMs: int({ doc: "Per-ping timeout (ms).", default: 10_000, min: 100, max: 120_000 }),
    failureThreshold: int({
      doc: "Consecutive failed pings that raise a sink_error alert (401/403/404/410 raise it at once).",
      default: 3,
      min: 1,
      max: 1_000,
    }),
  };
}

/** Keys of each sink kind, in documentation order (alert sinks, then the heartbeat); secrets resolve from `env`. */
export function sinkShapes(env: EnvRecord) {
  return {
    slack: { ...commonShape(env, "slack"), ...groupingShape() },
    discord: { ...commonShape(env, "discord"), ...groupingShape() },
    telegram: {
      ...commonShape(env, "telegram"),
      ...groupingShape(),
      botToken: secret(env, { doc: "Bot token from @BotFather (secret; use env:NAME)." }),
      // Telegram chat ids are often written as JSON numbers: those are accepted as well as strings.
      chatId: secret(env, {
        doc: "Chat id (e.g. -1001234567890) or @channelname; a number, a string or env:NAME.",
        check: (s) => (/^(-?\d+|@\w+)$/.test(s) ? undefined : "must be a numeric chat id or @channel"),
        integers: true,
      }),
    },
    pagerduty: {
      ...commonShape(env, "pagerduty"),
      ...groupingShape(),
      routingKey: secret(env, {
        doc: "Events v2 integration (routing) key, 32 characters (secret; use env:NAME).",
        check: (s) => (/^[A-Za-z0-9]{32}$/.test(s) ? undefined : "must be a 32-character integration key"),
      }),
    },
    alertmanager: {
      ...commonShape(env, "alertmanager"),
      resendIntervalMs: int({
        doc: "Re-send firing alerts this often so Alertmanager keeps them active (ms).",
        default: 60_000,
        min: 1_000,
        max: 3_600_000,
      }),
    },
    webhook: {
      ...commonShape(env, "webhook"),
      ...groupingShape(),
      secret: secret(env, {
        doc: "HMAC-SHA256 signing key, ≥ 16 characters (secret; use env:NAME).",
        check: (s) => (s.length >= 16 ? undefined : "must be at least 16 characters"),
      }),
    },
    heartbeat: heartbeatShape(env),
  };
}

/** Kinds whose sinks group their notifications (Alertmanager groups by itself; the heartbeat has no alerts). */
const GROUPING_KINDS: ReadonlySet<unknown> = new Set([
  "slack",
  "discord",
  "telegram",
  "pagerduty",
  "webhook",
]);

/** A raw sink element with the grouping keys it leaves out taken from the top-level `grouping` section. */
function withGroupingDefaults(item: unknown, grouping: GroupingDefaults): unknown {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return item;
  const element = item as Record<string, unknown>;
  if (!GROUPING_KINDS.has(element.kind)) return item;
  return {
    groupBy: [...grouping.groupBy],
    groupWaitMs: grouping.groupWaitMs,
    groupIntervalMs: grouping.groupIntervalMs,
    repeatIntervalMs: grouping.repeatIntervalMs,
    ...element,
  };
}

type SinkShapes = ReturnType<typeof sinkShapes>;
type Output<K extends keyof SinkShapes> = Readonly<z.output<z.ZodObject<SinkShapes[K]>>>;

/** One element of `sinks`. */
export type SinkConfig = { [K in keyof SinkShapes]: Output<K> }[keyof SinkShapes];
export type SinkKind = SinkConfig["kind"];
export type HeartbeatSinkConfig = Output<"heartbeat">;
/** A sink that delivers alerts (everything but the heartbeat). */
export type AlertSinkConfig = Exclude<SinkConfig, HeartbeatSinkConfig>;
export type AlertSinkKind = AlertSinkConfig["kind"];
/** Settings every alert sink shares: routing filters, rate limit and delivery policy. */
export type SinkCommonConfig = Omit<Output<"slack">, "kind" | "url">;

/** Read the `sinks` array (raw JSON), resolving `env:NAME` secrets from `env`; names must be unique. */
export function readSinks(
  raw: unknown,
  env: EnvRecord,
  problems: ConfigProblem[],
  grouping: GroupingDefaults = GROUPING_DEFAULTS,
): SinkConfig[] {
  const shapes = sinkShapes(env);
  const schemas: KindSchemas<SinkKind, SinkConfig> = {
    slack: { schema: element(shapes.slack) },
    discord: { schema: element(shapes.discord) },
    telegram: { schema: element(shapes.telegram) },
    pagerduty: { schema: element(shapes.pagerduty) },
    alertmanager: { schema: element(shapes.alertmanager) },
    webhook: { schema: element(shapes.webhook) },
    heartbeat: { schema: element(shapes.heartbeat) },
  };
  const items = parseArray(raw, "sinks", problems, (item, key) =>
    parseKinded(schemas, withGroupingDefaults(item, grouping), key, problems),
  );
  return reportDuplicates(
    items,
    "sinks",
    problems,
    (s) => s.name,
    ".name",
    (name, first) => `duplicate name "${name}" (also ${first}); give each sink a distinct name`,
  );
}
