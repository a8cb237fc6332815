// What the daemon does differently from the configuration as written, because the live server would refuse it.
import type { MonitorsConfig } from "./types.js";
import { componentsSupported } from "../upstream/server-rules.js";

/** One `key: what the daemon does instead` line per adapted monitor (printed by check-config, logged at start). */
export function adaptationNotes(monitors: MonitorsConfig): string[] {
  const notes: string[] = [];
  monitors.offchain.forEach((m, i) => {
    const key = `monitors.offchain[${i}]`;
    if (!componentsSupported(m.aggregation)) {
      notes.push(
        `${key}: ${m.pair} ${m.aggregation} is polled without components (upstream fails ${m.aggregation} with components: 500), so component_deviation has no data for it`,
      );
    }
    if (monitors.warmup.enabled && (m.entryType !== "spot" || m.aggregation !== "median")) {
      notes.push(
        `${key}: ${m.pair} ${m.entryType} ${m.aggregation} is not warmed from candles (upstream candles are spot medians); its windows fill from its own polls`,
      );
    }
  });
  return notes;
}
