// Slack incoming-webhook renderer: Block Kit header/section/context blocks plus a plain `text` fallback.
import type { AlertPayload } from "../../domain/events.js";
import {
  alertSubject,
  alertTitle,
  digestHeadline,
  firedForText,
  formatValue,
  groupDigest,
  joinLinesWithin,
  statusEmoji,
  truncate,
} from "./format.js";
import type { ChatMessage, RenderedRequest } from "./types.js";

// Block Kit limits: header text 150 chars, section text 3000, 10 fields of 2000 chars, 50 blocks.
const HEADER_MAX_CHARS = 150;
const SECTION_MAX_CHARS = 3000;
const FIELD_MAX_CHARS = 2000;
const FIELDS_PER_SECTION = 10;

type Block = Readonly<Record<string, unknown>>;

/** Render an alert or a digest as a Slack incoming-webhook request. */
export function renderSlack(message: ChatMessage): RenderedRequest {
  const payload = message.kind === "alert" ? alertPayload(message.event.alert) : digestPayload(message);
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

function digestPayload(message: Extract<ChatMessage, { kind: "digest" }>): Readonly<Record<string, unknown>> {
  const groups = groupDigest(message.events);
  const headline = digestHeadline(groups);
  const line = (alert: AlertPayload): string =>
    `${statusEmoji(alert)} *${escapeSlack(alertSubject(alert))}*: ${escapeSlack(truncate(alert.summary, 200))}`;
  const blocks: Block[] = [
    {
      type: "header",
      text: plain(
        truncate(
          `📋 Digest: ${groups.firing.length} firing, ${groups.resolved.length} resolved`,
          HEADER_MAX_CHARS,
        ),
      ),
    },
    { type: "section", text: mrkdwn(truncate(escapeSlack(headline), SECTION_MAX_CHARS)) },
  ];
  const lines = [...groups.firing, ...groups.resolved].map(line);
  if (lines.length > 0)
    blocks.push({ type: "section", text: mrkdwn(joinLinesWithin(lines, SECTION_MAX_CHARS)) });
  blocks.push({
    type: "context",
    elements: [mrkdwn(`pragma-monitor · ${message.events.length} transitions coalesced by the rate limit`)],
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
