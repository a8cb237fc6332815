// Slack incoming-webhook renderer: Block Kit header/section/context blocks plus a plain `text` fallback.
import type { AlertPayload } from "../../domain/events.js";
import {
  alertSubject,
  alertTitle,
  firedForText,
  formatValue,
  groupHeadline,
  groupLineParts,
  joinLinesWithin,
  seqRangeText,
  statusEmoji,
  truncate,
} from "./format.js";
import type { GroupAlert } from "./group-schedule.js";
import type { ChatMessage, GroupMessage, RenderedRequest } from "./types.js";

// Block Kit limits: header text 150 chars, section text 3000, 10 fields of 2000 chars, 50 blocks.
const HEADER_MAX_CHARS = 150;
const SECTION_MAX_CHARS = 3000;
const FIELD_MAX_CHARS = 2000;
const FIELDS_PER_SECTION = 10;

type Block = Readonly<Record<string, unknown>>;

/** Render an alert or a group notification as a Slack incoming-webhook request. */
export function renderSlack(message: ChatMessage): RenderedRequest {
  const payload = message.kind === "alert" ? alertPayload(message.event.alert) : groupPayload(message);
  return { body: JSON.stringify(payload), headers: { "content-type": "application/json" } };
}

/** Escape the three characters Slack's mrkdwn treats as control characters. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function alertPayload(alert: AlertPayload): Readonly<Record<string, unknown>> {
  const firedFor = firedForText(alert);
  const resolvedNote = alert.status === "resolved" && firedFor !== "" ? ` (fired for ${firedFor})` : "";
  const fields = [
    field("Rule", alert.rule),
    field("Severity", alert.severity),
    ...Object.entries(alert.labels).map(([name, value]) => field(name, value)),
    field("Value", formatValue(alert.value)),
    field("Threshold", formatValue(alert.threshold)),
    field("Started", alert.startsAt),
  ];
  if (alert.endsAt !== null) fields.push(field("Resolved", `${alert.endsAt}${resolvedNote}`));
  const blocks: Block[] = [
    { type: "header", text: plain(truncate(alertTitle(alert), HEADER_MAX_CHARS)) },
    { type: "section", text: mrkdwn(truncate(escapeSlack(alert.summary) + resolvedNote, SECTION_MAX_CHARS)) },
  ];
  for (let i = 0; i < fields.length && blocks.length < 45; i += FIELDS_PER_SECTION)
    blocks.push({ type: "section", fields: fields.slice(i, i + FIELDS_PER_SECTION) });
  blocks.push({
    type: "context",
    elements: [mrkdwn(`pragma-monitor · fingerprint \`${escapeSlack(alert.fingerprint)}\``)],
  });
  const text = `${statusEmoji(alert)} ${alert.status.toUpperCase()} [${alert.severity}] ${alertSubject(alert)}: ${alert.summary}${resolvedNote}`;
  return { text: truncate(escapeSlack(text), SECTION_MAX_CHARS), blocks };
}

/** One message for a whole group: counts in the header, one line per alert (most severe first), "and K more". */
function groupPayload(message: GroupMessage): Readonly<Record<string, unknown>> {
  const headline = groupHeadline(message);
  const line = (listed: GroupAlert): string => {
    const { head, summary } = groupLineParts(listed);
    return `${escapeSlack(head)}: ${escapeSlack(truncate(summary, 200))}`;
  };
  const common = Object.entries(message.commonLabels).map(([name, value]) => `${name}=${value}`);
  const blocks: Block[] = [{ type: "header", text: plain(truncate(headline, HEADER_MAX_CHARS)) }];
  if (common.length > 0)
    blocks.push({
      type: "section",
      text: mrkdwn(truncate(`*Common labels:* ${escapeSlack(common.join(", "))}`, SECTION_MAX_CHARS)),
    });
  blocks.push({
    type: "section",
    text: mrkdwn(joinLinesWithin(message.alerts.map(line), SECTION_MAX_CHARS)),
  });
  const seqs = seqRangeText(message);
  blocks.push({
    type: "context",
    elements: [
      mrkdwn(
        truncate(
          `pragma-monitor · group \`${escapeSlack(message.key)}\`${seqs === "" ? "" : ` · events ${seqs}`}`,
          SECTION_MAX_CHARS,
        ),
      ),
    ],
  });
  return { text: truncate(escapeSlack(headline), SECTION_MAX_CHARS), blocks };
}

function field(name: string, value: string): Block {
  return mrkdwn(truncate(`*${escapeSlack(name)}*\n${escapeSlack(value)}`, FIELD_MAX_CHARS));
}

function plain(text: string): Block {
  return { type: "plain_text", text, emoji: true };
}

function mrkdwn(text: string): Block {
  return { type: "mrkdwn", text };
}
