// Valid but risky settings: reported by check-config and logged at startup, never refused.
import { isLoopbackHost } from "./hosts.js";
import type { ConfigProblem } from "./problems.js";
import type { AppConfig } from "./types.js";

/** Every warning `config` deserves, as `key: reason` (empty when nothing is risky). */
export function configWarnings(config: AppConfig): ConfigProblem[] {
  const { server } = config;
  const warnings: ConfigProblem[] = [];
  if (isLoopbackHost(server.host)) return warnings;
  if (server.token === "")
    warnings.push({
      key: "server.token",
      reason: `unset while bound to non-loopback ${server.host}: anyone who can reach the port reads every alert over /ws (set server.token)`,
    });
  if (server.metricsToken === "")
    warnings.push({
      key: "server.metricsToken",
      reason: `unset while bound to non-loopback ${server.host}: /metrics is open to anyone who can reach the port`,
    });
  return warnings;
}
