// Redaction of secrets for display: schema keys marked sensitive, sink secrets, and passwords in URLs.
import type { AppConfig, SinkConfig } from "./types.js";
import { redactUrlPassword } from "./checks.js";

/** What replaces a secret value. */
export const REDACTED = "[redacted]";

/** Sink fields that hold a secret, per kind (a Slack or Discord webhook URL is itself a credential). */
const SINK_SECRETS: Readonly<Record<SinkConfig["kind"], readonly string[]>> = {
  slack: ["url"],
  discord: ["url"],
  telegram: ["botToken"],
  pagerduty: ["routingKey"],
  alertmanager: [],
  webhook: ["secret"],
};

function hide(value: string): string {
  return value === "" ? "" : REDACTED;
}

/** A plain copy of the config with every secret replaced by "[redacted]" (unset secrets stay ""). */
export function redactConfig(config: AppConfig): Record<string, unknown> {
  const { upstream, server, sinks } = config;
  return structuredClone({
    ...config,
    upstream: {
      ...upstream,
      url: redactUrlPassword(upstream.url),
      vaultUrl: redactUrlPassword(upstream.vaultUrl),
      apiKey: hide(upstream.apiKey),
      simulator: { ...upstream.simulator, apiKeys: upstream.simulator.apiKeys.map(hide) },
    },
    server: { ...server, token: hide(server.token), metricsToken: hide(server.metricsToken) },
    sinks: sinks.map((sink) => {
      const copy: Record<string, unknown> = { ...sink, url: redactUrlPassword(sink.url) };
      for (const field of SINK_SECRETS[sink.kind]) {
        const value = copy[field];
        if (typeof value === "string") copy[field] = hide(value);
      }
      return copy;
    }),
  });
}
