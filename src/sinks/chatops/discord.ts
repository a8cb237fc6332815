// Discord webhook renderer: one embed with title, description, fields, severity colour and timestamp.
import type { AlertPayload, Severity } from "../../domain/events.js";
import {
  alertTitle,
  firedForText,
  formatValue,
  groupHeadline,
  groupLineParts,
  joinLinesWithin,
  seqRangeText,
  truncate,
  worstFiring,
} from "./format.js";
import type { ChatMessage, GroupMessage, RenderedRequest } from "./types.js";

// Embed limits: title 256, description 4096, 25 fields (name 256, value 1024), footer 2048, 6000 total.
const TITLE_MAX_CHARS = 256;
const DESCRIPTION_MAX_CHARS = 4096;
const FIELD_NAME_MAX_CHARS = 256;
const FIELD_VALUE_MAX_CHARS = 1024;
const MAX_FIELDS = 25;
const EMBED_TOTAL_MAX_CHARS = 6000;
// Keep the whole embed under Discord's 6000-character total.
const ALERT_DESCRIPTION_MAX_CHARS = 2000;
const GROUP_DESCRIPTION_MAX_CHARS = 3500;

/** Embed colours (0xRRGGBB) by severity; resolved alerts are green. */
export const DISCORD_COLOURS: Readonly<Record<Severity | "resolved", number>> = {
  critical: 0xe01e5a,
  warning: 0xf2a100,
  info: 0x3aa3e3,
  resolved: 0x2eb67d,
};

interface EmbedField {
  readonly name: string;
  readonly value: string;
  readonly inline: boolean;
}

/** Render an alert or a group notification as a Discord webhook request (mentions disabled). */
export function renderDiscord(message: ChatMessage): RenderedRequest {
  const embed = message.kind === "alert" ? alertEmbed(message.event.alert) : groupEmbed(message);
  const payload = { username: "pragma-monitor", embeds: [embed], allowed_mentions: { parse: [] } };
  return { body: JSON.stringify(payload), headers: { "content-type": "application/json" } };
}

function alertEmbed(alert: AlertPayload): Readonly<Record<string, unknown>> {
  const firedFor = firedForText(alert);
  const description =
    alert.status === "resolved" && firedFor !== ""
      ? `${alert.summary}\nResolved after ${firedFor}.`
      : alert.summary;
  const fields: EmbedField[] = [
    field("Rule", alert.rule),
    field("Severity", alert.severity),
    ...Object.entries(alert.labels).map(([name, value]) => field(name, value)),
    field("Value", formatValue(alert.value)),
    field("Threshold", formatValue(alert.threshold)),
    field("Started", alert.startsAt),
  ];
  const title = truncate(alertTitle(alert), TITLE_MAX_CHARS);
  const body = truncate(description, ALERT_DESCRIPTION_MAX_CHARS);
  const footer = truncate(`pragma-monitor · ${alert.fingerprint}`, 200);
  return {
    title,
    description: body,
    color: alert.status === "resolved" ? DISCORD_COLOURS.resolved : DISCORD_COLOURS[alert.severity],
    fields: withinBudget(
      fields.slice(0, MAX_FIELDS),
      EMBED_TOTAL_MAX_CHARS - title.length - body.length - footer.length,
    ),
    timestamp: alert.endsAt ?? alert.startsAt,
    footer: { text: footer },
  };
}

/** One embed for a whole group: headline title, one line per alert (most severe first), "and K more". */
function groupEmbed(message: GroupMessage): Readonly<Record<string, unknown>> {
  const lines = message.alerts.map((listed) => {
    const { head, summary } = groupLineParts(listed);
    return `${head}: ${truncate(summary, 200)}`;
  });
  const common = Object.entries(message.commonLabels).map(([name, value]) => `${name}=${value}`);
  const intro = common.length === 0 ? "" : `Common labels: ${truncate(common.join(", "), 400)}\n\n`;
  const worst = worstFiring(message);
  const last = message.events[message.events.length - 1];
  const seqs = seqRangeText(message);
  return {
    title: truncate(groupHeadline(message), TITLE_MAX_CHARS),
    description: truncate(
      `${intro}${joinLinesWithin(lines, GROUP_DESCRIPTION_MAX_CHARS)}`,
      DESCRIPTION_MAX_CHARS,
    ),
    color: worst === undefined ? DISCORD_COLOURS.resolved : DISCORD_COLOURS[worst],
    ...(last === undefined ? {} : { timestamp: last.alert.endsAt ?? last.alert.startsAt }),
    footer: {
      text: truncate(`pragma-monitor · group ${message.key}${seqs === "" ? "" : ` · events ${seqs}`}`, 500),
    },
  };
}

/** Keep leading fields while their names and values fit in `budgetChars` (the embed's 6000-char total). */
function withinBudget(fields: readonly EmbedField[], budgetChars: number): EmbedField[] {
  const kept: EmbedField[] = [];
  let used = 0;
  for (const f of fields) {
    used += f.name.length + f.value.length;
    if (used > budgetChars) break;
    kept.push(f);
  }
  return kept;
}

function field(name: string, value: string): EmbedField {
  return {
    name: truncate(name, FIELD_NAME_MAX_CHARS),
    value: truncate(value === "" ? "-" : value, FIELD_VALUE_MAX_CHARS),
    inline: true,
  };
}
