// Generates docs/configuration.md from the convict schema and the zod element schemas, so the docs cannot drift.
import type { z } from "zod";
import { FIELD_DOCS } from "./fields.js";
import { MAINTENANCE_SHAPE, WEEKLY_SHAPE } from "./maintenance.js";
import { MONITOR_ARRAYS } from "./monitors.js";
import { CAUSE_RULES_DOC } from "./rules/cause.js";
import { RULE_DEFINITIONS } from "./rules/index.js";
import { configSchema } from "./schema.js";
import { leaves } from "./schema-node.js";
import { sinkShapes } from "./sinks.js";

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The keys of one element kind: `kind` first (when it has one), then every documented key. */
function fieldTable(shape: z.ZodRawShape, kindDoc?: string): string {
  const rows = Object.entries(shape).flatMap(([key, schema]) => {
    if (key === "kind") return kindDoc === undefined ? [] : [["`kind`", "`(required)`", kindDoc]];
    const doc = FIELD_DOCS.get(schema);
    if (doc === undefined) throw new Error(`element key ${key} has no docs`);
    return [[`\`${key}\``, `\`${doc.default}\``, doc.doc]];
  });
  return table(["key", "default", "doc"], rows);
}

/** Markdown table of every schema key with its env variable, default and doc (also embedded in the README). */
export function schemaKeysTableMarkdown(): string {
  const keyRows = leaves(configSchema).map(([key, leaf]) => [
    `\`${key}\``,
    `\`${leaf.env}\``,
    `\`${JSON.stringify(leaf.default)}\``,
    leaf.sensitive === true ? `${leaf.doc} Redacted in output.` : leaf.doc,
  ]);
  return table(["key", "env", "default", "doc"], keyRows);
}

/** Markdown tables of every key: top-level keys with env and defaults, then the keys of each array element. */
export function configTableMarkdown(): string {
  const parts = ["## Keys", "", schemaKeysTableMarkdown(), ""];

  parts.push("## Monitor elements", "");
  for (const [name, array] of Object.entries(MONITOR_ARRAYS)) {
    parts.push(`### \`monitors.${name}[]\``, "", fieldTable(array.shape), "");
  }

  parts.push("## Rule elements (`rules[]`)", "");
  for (const rule of Object.values(RULE_DEFINITIONS)) {
    if (rule.kind === "upstream_down") parts.push("### Cause rules", "", CAUSE_RULES_DOC);
    parts.push(`### \`${rule.kind}\``, "", `Threshold: ${rule.thresholdDoc}.`, "");
    parts.push(fieldTable(rule.shape, "Rule kind (see the table per kind)."), "");
  }

  parts.push("## Notification grouping", "", GROUPING_INTRO);
  parts.push("## Sink elements (`sinks[]`)", "");
  for (const [kind, shape] of Object.entries(sinkShapes({}))) {
    parts.push(`### \`${kind}\``, "", fieldTable(shape, "Sink kind."), "");
  }

  parts.push(
    "## Maintenance windows (`maintenance[]`)",
    "",
    MAINTENANCE_INTRO,
    fieldTable(MAINTENANCE_SHAPE),
    "",
  );
  parts.push("### `weekly`", "", fieldTable(WEEKLY_SHAPE), "");
  return parts.join("\n");
}

const GROUPING_INTRO = `Each chat-ops sink cuts its notifications with Alertmanager's grouping: alerts whose \`groupBy\` labels
have the same values form a group, and a group is notified as one message listing every alert in it with its
state since the group's previous message (new, still firing, resolved). The keys are per sink (\`groupBy\`,
\`groupWaitMs\`, \`groupIntervalMs\`, \`repeatIntervalMs\`); a sink that leaves one out takes \`grouping.*\`.

- A new group waits \`groupWaitMs\` (default 5 s) after its first alert, then sends one notification with
  everything that arrived meanwhile: an incident that raises 40 alerts within a few polls is one message.
- After a notification, the group sends again at most every \`groupIntervalMs\` (default 60 s), and only when
  something changed (a new alert, a resolve, any new transition); a change after a quiet spell still waits
  \`groupWaitMs\`, so resolves that trickle in over a few polls close the incident together. Resolved alerts
  leave the group once notified, and a group left with no firing alert ends; the next alert with the same
  labels opens a new group.
- Children of a cause alert (\`causedBy\`, see Cause rules) are not notified on their own. One that fired
  before its parent and was adopted while the group waited is left out of the group's notification (its parent
  names it), and so is its resolve. A sink never notifies the resolve of an alert it did not announce (as
  Alertmanager); an alert that fires and resolves within one wait is listed once, as resolved.
- A group whose alerts keep firing with nothing new is notified again after \`repeatIntervalMs\` (default
  4 h; 0 = never), on top of the rules' own \`repeatInterval\` reminders, which are transitions like any other.
- \`groupBy: []\` (the default) is one group for everything the sink receives, as Alertmanager's default
  route; \`["rule"]\`, \`["pair"]\` or \`["market","severity"]\` split it (\`rule\` and \`severity\` count as
  labels; a missing label groups as ""). \`groupBy: ["..."]\` turns grouping off: every transition is sent on
  its own, at once, in the single-alert format (the webhook body is the bare event, PagerDuty keys by
  fingerprint).
- Over the rate limit (\`ratePerMinute\`, \`burst\`) a due group waits for a token and keeps taking in what
  arrives, so pressure makes groups bigger, not messages more numerous. With grouping off there is no
  digest: transitions wait for tokens one by one.
- The \`alertmanager\` sink does not group: it posts alerts one by one (several waiting go in one POST), and
  Alertmanager groups them with its own \`group_by\`.

**Trade-off.** \`groupWaitMs\` is the delay added to the first page of an incident (detection + 5 s by
default) against how much of the incident that page names; \`groupIntervalMs\` is how late a new alert in
an open incident (or its resolve) can be, against how many messages an incident sends. The defaults favour
a price monitor: a market move or an upstream outage is seen within a few seconds and is one message to
open and, if it clears within a minute or so, one to close. For faster follow-ups lower
\`groupIntervalMs\` (10-30 s); to page each pair separately set \`groupBy: ["pair"]\`. With \`groupBy: []\` one
long-firing alert (a stale vault, say) keeps the sink's one group open, and a new incident then joins it: its
first page waits for the group interval (up to 60 s) instead of the group wait; \`groupBy: ["rule"]\` keeps
unrelated rules apart at the price of one message per rule of an incident.

Grouping only cuts notifications: the WebSocket, the journal and the HTTP API still carry every transition.
What each group has notified is kept in the sink's outbox file and survives a restart or a kill -9: a group
that announced an alert does not announce it again, and its resolve is not lost.

`;

const MAINTENANCE_INTRO = `A maintenance window is a recurring silence kept in the config. While one of its occurrences is on,
the alerts its matchers select keep their lifecycle (WebSocket, journal, API) but chat-ops sinks do not notify
them, as under a silence made with \`pragma-monitor silence add\`. The API and the status page show each window
as the silence \`maintenance:<name>\` (created by \`config\`): active during an occurrence, pending until the
next. To change one, edit the config and reload (SIGHUP).

A window has one schedule: \`weekly\` (days, a start and an end on the wall clock of \`timeZone\`; an end
before the start is on the next day), or \`cron\` (5 fields read in \`timeZone\`, as
[croner](https://croner.56k.guru/usage/pattern/) reads them, \`L\` and \`#\` included; day-of-month and
day-of-week match either, as in Vixie cron) with \`durationMs\`. Weekly ends are wall-clock times, so a
01:00-04:00 window lasts 2 or 4 hours on the nights the clocks change; a cron occurrence lasts exactly
\`durationMs\`. A start in the hour the clock skips begins when the clock reaches the next valid time; a start
in the hour that repeats happens once, at its first pass. Cron occurrences that overlap or touch count as one.

\`\`\`json
"maintenance": [
  {
    "name": "weekend-db-upgrade",
    "matchers": ["pair=~\\"BTC/.*|ETH/.*\\"", "rule!=upstream_error"],
    "comment": "exchange maintenance, Saturday and Sunday nights",
    "weekly": { "days": ["sat", "sun"], "start": "22:00", "end": "02:00" },
    "timeZone": "Europe/Paris"
  },
  {
    "name": "nightly-node-restart",
    "matchers": ["market=onchain"],
    "comment": "RPC nodes restart on weekdays",
    "cron": "30 3 * * 1-5",
    "durationMs": 900000,
    "timeZone": "America/New_York"
  }
]
\`\`\`
`;

const INTRO = `# Configuration

<!-- Generated by src/config/docs.ts; do not edit by hand. Regenerate with
     PM_UPDATE_DOCS=1 npx vitest run test/config/docs.test.ts -->

Configuration is a [convict](https://github.com/mozilla/node-convict) schema (\`src/config/schema.ts\`); the
elements of its arrays are [zod](https://zod.dev) schemas (\`src/config/monitors.ts\`, \`sinks.ts\`, \`rules/\`).
Layers, lowest to highest precedence:

1. the schema defaults below;
2. \`config/default.json\` (ships with the package: the embedded-simulator demo);
3. the file given with \`--config FILE\`;
4. environment variables (\`PM_*\`, column "env");
5. flags: \`--set key=value\` (repeatable, dotted keys, arrays as JSON).

Objects merge key by key, but **arrays replace**: a \`--config\` file that sets \`rules\` replaces all the
demo rules, and one that leaves \`monitors.vaults\` unset keeps the demo vault. A production file should
set every \`monitors.*\` array, \`rules\` and \`sinks\` (see \`config/production.example.json\`).

Validation is strict: an unknown key (also inside an array element, e.g. \`rules[2].treshold\`), a wrong
type, an out-of-range number or an unknown enum value is an error naming the key.
\`pragma-monitor check-config [--config FILE] [--set key=value]\` prints the effective configuration
with secrets redacted (exit 0) or every problem as \`key: reason\` (exit 78); \`run\` exits 78 likewise.

- **Secrets.** \`upstream.apiKey\` (\`PM_API_KEY\`) and \`server.token\` (\`PM_SERVER_TOKEN\`) are best set
  from the environment. Secret fields of sinks (\`url\`, \`botToken\`, \`chatId\`, \`routingKey\`, \`secret\`)
  accept \`"env:NAME"\`: the value is read from environment variable \`NAME\` at load, and a missing
  variable is an error. Secrets and passwords in URLs print as \`"[redacted]"\`.
- **Units.** Durations are milliseconds (\`...Ms\`); relative thresholds are fractions (0.02 = 2 %).
- **Pairs** are \`LETTERS/LETTERS\` and are upper-cased.
- **State directory.** \`state.dir\` is relative to the working directory. Under systemd with
  \`StateDirectory=\`, \`$STATE_DIRECTORY\` is used when \`state.dir\` is not set by \`--config\`,
  \`PM_STATE_DIR\` or a flag.
- **Upstream.** \`upstream.url\` is \`"simulator"\` (start the embedded simulator) or the base URL of the
  Pragma API you were given with your API key; \`production.example.json\` uses the placeholder
  \`https://pragma-api.invalid\` (the reserved \`.invalid\` domain never resolves) so a copy that was not
  edited fails loudly. Sinks have no default URL; each sink's \`url\` row names the real service.

`;

/** What a SIGHUP reload applies live and what waits for a restart (src/app-lifecycle.ts reloadApp, src/upstream-reload.ts). */
const RELOAD_DOC = `## Reloading (SIGHUP)

\`kill -HUP <pid>\` (\`systemctl reload pragma-monitor\`) loads and validates the config again; an invalid one is
logged and the running config kept. What a valid one changes:

- **Live**: \`monitors\` (only the targets that changed restart; alert state stays with each target that remains),
  \`rules\`, \`sinks\` (a changed sink restarts with its outbox), \`maintenance\`, and the transport:
  \`upstream.transport\`, \`monitors.offchain[].transport\` and \`upstream.stream.*\`.
- **Transport switches in place.** A target whose only change is its transport switches between its polls and
  its place on the stream without restarting: its firing alerts are neither announced again nor resolved, its
  failure count and readiness carry over, and the price it last fed is remembered, so the first price of the new
  path is not observed again when the old path already delivered it. Each switch logs \`transport switched\`
  (\`target\`, \`from\`, \`to\`).
- **Poll settings.** A change of \`monitors.coalesceMs\`, \`monitors.jitter\` or \`monitors.maxBackoffMs\` restarts
  every running poll under the new values (a streamed target's component or fallback poll too), each at a new phase
  within \`monitors.spreadMs\`; the targets themselves stay, with their alerts, health and failure counts. A change
  of \`spreadMs\` alone places the polls that start after it.
- **Stream settings.** A change of any \`upstream.stream.*\` key (or of \`upstream.transport\`) reopens the stream
  connections with the new settings and logs \`upstream transport and stream settings reloaded\` with the changed
  \`keys\`; each streamed target keeps its mode (a target polling because the stream was stale keeps polling until
  the new connection delivers \`recoverEvents\` prices in a row), and component polls restart when
  \`componentsPeriodMs\` changed.
- **On restart only**: \`server\`, \`state\` and the other \`upstream\` keys (\`url\`, \`vaultUrl\`, \`apiKey\`,
  \`timeoutMs\`, \`connections\`, \`retry\`, \`simulator\`); a reload that changes one logs
  \`these sections change only on restart\` with the keys (e.g. \`upstream.timeoutMs\`) and keeps the running
  values, also for the stream connections.

`;

/** The full docs/configuration.md. */
export function configurationMarkdown(): string {
  return `${INTRO}${RELOAD_DOC}${configTableMarkdown()}`;
}
