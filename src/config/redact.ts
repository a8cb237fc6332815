// Redaction of secrets for display: schema keys marked sensitive, sink secrets, and passwords in URLs.
import type { AppConfig, SinkConfig } from "./types.js";

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
  heartbeat: ["url", "failUrl"], // a ping URL carries its check's secret id
};

/** Query parameters that carry a credential (`?token=` is how browsers authenticate to /ws). */
const SECRET_QUERY_PARAMS = ["token", "apiKey", "api_key"];

/**
 * A URL safe to log or print: the password of its userinfo (or a bare username, usually a token) and
 * credential query parameters become "[redacted]". Takes absolute URLs and request paths ("/ws?token=x");
 * anything unparsable is returned as it is (config validation already refused it).
 */
export function redactUrl(value: string): string {
  const isPath = value.startsWith("/");
  let url: URL;
  try {
    url = new URL(value, isPath ? "http://path.invalid" : undefined);
  } catch {
    return value;
  }
  let changed = false;
  if (url.password !== "" || url.username !== "") {
    if (url.password !== "") url.password = "REDACTED";
    else url.username = "REDACTED";
    changed = true;
  }
  for (const name of SECRET_QUERY_PARAMS) {
    if (url.searchParams.has(name)) {
      url.searchParams.set(name, "REDACTED");
      changed = true;
    }
  }
  if (!changed) return value;
  const text = (isPath ? url.pathname + url.search + url.hash : url.toString()).replaceAll(
    "REDACTED",
    REDACTED,
  );
  return text.replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

function hide(value: string): string {
  return value === "" ? "" : REDACTED;
}

/** A plain copy of the config with every secret replaced by "[redacted]" (unset secrets stay ""). */
export function redactConfig(config: AppConfig): Record<string, unknown> {
  const { upstream, server, sinks, cluster } = config;
  return structuredClone({
    ...config,
    upstream: {
      ...upstream,
      url: redactUrl(upstream.url),
      vaultUrl: redactUrl(upstream.vaultUrl),
      apiKey: hide(upstream.apiKey),
      simulator: { ...upstream.simulator, apiKeys: upstream.simulator.apiKeys.map(hide) },
    },
    server: { ...server, token: hide(server.token), metricsToken: hide(server.metricsToken) },
    cluster: {
      ...cluster,
      nats: {
        ...cluster.nats,
        servers: cluster.nats.servers.map(redactUrl),
        user: hide(cluster.nats.user),
        password: hide(cluster.nats.password),
        token: hide(cluster.nats.token),
      },
    },
    sinks: sinks.map((sink) => {
      const copy: Record<string, unknown> = { ...sink, url: redactUrl(sink.url) };
      if (sink.kind === "heartbeat") copy["failUrl"] = redactUrl(sink.failUrl);
      for (const field of SINK_SECRETS[sink.kind]) {
        const value = copy[field];
        if (typeof value === "string") copy[field] = hide(value);
      }
      return copy;
    }),
  });
}
