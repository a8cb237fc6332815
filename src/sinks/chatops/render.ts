// Dispatch from a sink's config to its renderer and endpoint URL.
import type { AlertSinkConfig } from "../../config/types.js";
import { alertmanagerUrl, renderAlertmanager } from "./alertmanager.js";
import { renderDiscord } from "./discord.js";
import { renderPagerDuty } from "./pagerduty.js";
import { renderSlack } from "./slack.js";
import { renderTelegram, telegramUrl } from "./telegram.js";
import type { AnyMessage, RenderedRequest } from "./types.js";
import { renderWebhook } from "./webhook.js";

/** Per-send facts a renderer may need: the clock (signatures, endsAt), the stable delivery id, links. */
export interface RenderContext {
  readonly nowMs: number;
  readonly deliveryId: string;
  /** Link to an alert in this daemon by fingerprint (Alertmanager's generatorURL). */
  readonly generatorUrl?: (fingerprint: string) => string;
}

/** The URL a sink POSTs to (it may contain a secret: never log it). */
export function endpointUrl(sink: AlertSinkConfig): string {
  switch (sink.kind) {
    case "telegram":
      return telegramUrl(sink.url, sink.botToken);
    case "alertmanager":
      return alertmanagerUrl(sink.url);
    case "slack":
    case "discord":
    case "pagerduty":
    case "webhook":
      return sink.url;
  }
}

/** Render `message` for `sink`; batches and refreshes only exist for Alertmanager. */
export function renderFor(
  sink: AlertSinkConfig,
  message: AnyMessage,
  context: RenderContext,
): RenderedRequest {
  if (sink.kind === "alertmanager")
    return renderAlertmanager(message, {
      nowMs: context.nowMs,
      resendIntervalMs: sink.resendIntervalMs,
      ...(context.generatorUrl === undefined ? {} : { generatorUrl: context.generatorUrl }),
    });
  if (message.kind === "refresh" || message.kind === "batch")
    throw new TypeError(`${message.kind} messages are Alertmanager-only (${sink.kind})`);
  switch (sink.kind) {
    case "slack":
      return renderSlack(message);
    case "discord":
      return renderDiscord(message);
    case "telegram":
      return renderTelegram(message, { chatId: sink.chatId });
    case "pagerduty":
      return renderPagerDuty(message, { routingKey: sink.routingKey });
    case "webhook":
      return renderWebhook(message, {
        secret: sink.secret,
        nowMs: context.nowMs,
        deliveryId: context.deliveryId,
      });
  }
}
