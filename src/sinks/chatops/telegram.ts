// Telegram Bot API renderer: a `sendMessage` body with HTML parse mode and escaped text under 4096 chars.
import type { AlertPayload } from "../../domain/events.js";
import {
  alertTitle,
  firedForText,
  formatValue,
  groupHeadline,
  groupLineParts,
  joinLinesWithin,
} from "./format.js";
import type { ChatMessage, GroupMessage, RenderedRequest } from "./types.js";

/** Telegram's limit on a message's text (counted after entity parsing; we bound the raw HTML). */
export const TELEGRAM_TEXT_MAX_CHARS = 4096;

/** Escape text for Telegram's HTML parse mode (`&`, `<`, `>` and, for attributes, `"`). */
export function escapeTelegramHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The Bot API method URL, e.g. https://api.telegram.org/bot<token>/sendMessage (contains the secret token). */
export function telegramUrl(baseUrl: string, botToken: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/bot${botToken}/sendMessage`;
}

/** Render an alert or a group notification as a Telegram `sendMessage` request to `chatId`. */
export function renderTelegram(message: ChatMessage, options: { readonly chatId: string }): RenderedRequest {
  const text = message.kind === "alert" ? alertText(message.event.alert) : groupText(message);
  const payload = {
    chat_id: options.chatId,
    text,
    parse_mode: "HTML",
    link_preview_options: { is_disabled: true },
  };
  return { body: JSON.stringify(payload), headers: { "content-type": "application/json" } };
}

function alertText(alert: AlertPayload): string {
  const e = escapeWithin;
  const firedFor = firedForText(alert);
  const head = [
    `<b>${e(alertTitle(alert), 300)}</b>`,
    e(alert.summary, 2000),
    alert.status === "resolved" && firedFor !== "" ? `Resolved after ${e(firedFor, 50)}.` : "",
    `value <code>${e(formatValue(alert.value), 40)}</code> · threshold <code>${e(formatValue(alert.threshold), 40)}</code>`,
    `started ${e(alert.startsAt, 40)}`,
  ].filter((line) => line !== "");
  const labels = [`rule=${alert.rule}`, ...Object.entries(alert.labels).map(([k, v]) => `${k}=${v}`)].map(
    (label) => `<code>${e(label, 200)}</code>`,
  );
  const text = `${head.join("\n")}\n${joinLinesWithin(labels, TELEGRAM_TEXT_MAX_CHARS - head.join("\n").length - 100, " ")}`;
  return text.length <= TELEGRAM_TEXT_MAX_CHARS ? text : head.join("\n");
}

/** One message for a whole group, under Telegram's length limit: headline, one line per alert, "and K more". */
function groupText(message: GroupMessage): string {
  const headline = `<b>${escapeWithin(groupHeadline(message), 600)}</b>`;
  const common = Object.entries(message.commonLabels).map(([name, value]) => `${name}=${value}`);
  const intro = common.length === 0 ? "" : `\n<code>${escapeWithin(common.join(", "), 400)}</code>`;
  const lines = message.alerts.map((listed) => {
    const { head, summary } = groupLineParts(listed);
    return `<b>${escapeWithin(head, 150)}</b>: ${escapeWithin(summary, 200)}`;
  });
  const top = `${headline}${intro}`;
  return `${top}\n${joinLinesWithin(lines, TELEGRAM_TEXT_MAX_CHARS - top.length - 50)}`;
}

/** Escape `text` and cut it so the *escaped* form fits `maxChars`; never splits an entity or a code point. */
function escapeWithin(text: string, maxChars: number): string {
  const full = escapeTelegramHtml(text);
  if (full.length <= maxChars) return full;
  let out = "";
  for (const char of text) {
    const escaped = escapeTelegramHtml(char);
    if (out.length + escaped.length > maxChars - 1) break;
    out += escaped;
  }
  return `${out}…`;
}
