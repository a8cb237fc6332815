// What the daemon does differently from the configuration as written, because the live server would refuse it.
import type { MonitorsConfig, OffchainMonitorConfig } from "./types.js";
import { componentsSupported, streamRefusalReason, type Transport } from "../upstream/server-rules.js";

/** The transport an off-chain monitor asks for (its own, else the upstream default) and, when it cannot stream, why it polls. */
export function offchainTransport(
  m: Pick<OffchainMonitorConfig, "transport" | "entryType" | "aggregation">,
  defaultTransport: Transport,
): { readonly transport: Transport; readonly pollReason: string | null } {
  const asked = m.transport ?? defaultTransport;
  if (asked === "poll") return { transport: "poll", pollReason: null };
  const reason = streamRefusalReason(m.entryType, m.aggregation);
  return reason === null
    ? { transport: "stream", pollReason: null }
    : { transport: "poll", pollReason: reason };
}

/** One `key: what the daemon does instead` line per adapted monitor (printed by check-config, logged at start). */
export function adaptationNotes(monitors: MonitorsConfig, defaultTransport: Transport = "poll"): string[] {
  const notes: string[] = [];
  monitors.offchain.forEach((m, i) => {
    const key = `monitors.offchain[${i}]`;
    const { pollReason } = offchainTransport(m, defaultTransport);
    if (pollReason !== null)
      notes.push(`${key}: ${m.pair} ${m.entryType} ${m.aggregation} is polled: ${pollReason}`);
    if (!componentsSupported(m.aggregation)) {
      notes.push(
        `${key}: ${m.pair} ${m.aggregation} is polled without components (upstream fails ${m.aggregation} with components: 500), so component_deviation has no data for it`,
      );
    }
  });
  return notes;
}
