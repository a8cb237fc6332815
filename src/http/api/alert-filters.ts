// The alert filters the read routes share (pair, rule, severity, silenced): their query schema and the match.
import { z } from "zod";
import {
  SEVERITIES,
  ruleFilterMatches,
  severityRank,
  type AlertPayload,
  type Severity,
} from "../../domain/events.js";

/** Most names one list parameter may carry, and the longest name. */
const MAX_NAMES = 100;
const MAX_NAME_LENGTH = 200;

/**
 * A list parameter: repeated (`?pair=A&pair=B`), comma-separated (`?pair=A,B`) or both; blanks are dropped.
 * Absent or blank (`?pair=`) = no filter.
 */
export function nameList(description: string) {
  return z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe(description)
    .transform((value) => {
      if (value === undefined) return undefined;
      const names = (Array.isArray(value) ? value : [value])
        .flatMap((part) => part.split(","))
        .map((name) => name.trim())
        .filter((name) => name !== "");
      return names.length === 0 ? undefined : names;
    })
    .pipe(
      z
        .array(z.string().max(MAX_NAME_LENGTH, `a name is at most ${MAX_NAME_LENGTH} characters`))
        .max(MAX_NAMES, `at most ${MAX_NAMES} names`)
        .optional(),
    );
}

/** `true` or `false`, as a query string spells them. */
const BOOLEAN_TEXT = z
  .enum(["true", "false"], { error: "must be true or false" })
  .transform((text) => text === "true");

/** The filter parameters of GET /alerts and GET /alerts/history. */
export const ALERT_FILTER_QUERY = {
  fingerprint: nameList(
    "alert fingerprints (the generatorURL of the Alertmanager sink links here with one); any of them matches",
  ),
  pair: nameList("pairs, e.g. BTC/USD (repeat the parameter or separate with commas); any of them matches"),
  rule: nameList(
    "rule kinds (price_change) or configured rule ids, as sink filters take them; any of them matches",
  ),
  severity: z
    .enum(SEVERITIES, { error: `must be one of ${SEVERITIES.join(", ")}` })
    .optional()
    .describe("minimum severity: warning means warning and critical"),
  silenced: BOOLEAN_TEXT.optional().describe(
    "true: only alerts muted by at least one silence; false: only those that are not",
  ),
};

/** The parsed filters. */
export interface AlertFilter {
  readonly fingerprint?: readonly string[] | undefined;
  readonly pair?: readonly string[] | undefined;
  readonly rule?: readonly string[] | undefined;
  readonly severity?: Severity | undefined;
  readonly silenced?: boolean | undefined;
}

/** What the filters read of an alert (a journaled payload or an API alert). */
export type FilterableAlert = Pick<AlertPayload, "fingerprint" | "labels" | "rule" | "severity"> & {
  readonly silencedBy?: readonly string[] | undefined;
};

/** A predicate for `filter` (every given parameter must hold); built once per request. */
export function alertFilterMatcher(filter: AlertFilter): (alert: FilterableAlert) => boolean {
  const fingerprints = filter.fingerprint === undefined ? null : new Set(filter.fingerprint);
  const pairs = filter.pair === undefined ? null : new Set(filter.pair);
  const rules = filter.rule === undefined ? null : new Set(filter.rule);
  const minRank = filter.severity === undefined ? -1 : severityRank(filter.severity);
  return (alert) => {
    if (fingerprints !== null && !fingerprints.has(alert.fingerprint)) return false;
    if (pairs !== null && !pairs.has(alert.labels["pair"] ?? "")) return false;
    if (rules !== null && !ruleFilterMatches(rules, alert)) return false;
    if (severityRank(alert.severity) < minRank) return false;
    if (filter.silenced !== undefined && (alert.silencedBy?.length ?? 0) > 0 !== filter.silenced)
      return false;
    return true;
  };
}
