// What a replay means per rule and target: times fired, time spent firing, flaps; the timeline; the sinks' counts (pure).
import type { AlertPayload } from "../domain/events.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type { ReplayProblem, ReplayResult } from "./replay.js";
import type { SinkTally } from "./sink-sim.js";

/** One rule on one target (one alert fingerprint). */
export interface RuleTargetSummary {
  readonly rule: string;
  readonly kind: string;
  readonly target: string;
  readonly fingerprint: string;
  readonly fired: number;
  readonly firingMs: number;
  /** Firings that started within the rule's flapWindowMs of its previous resolve. */
  readonly flaps: number;
}

/** One line of the timeline. */
export interface TimelineEntry {
  readonly at: string;
  readonly rule: string;
  readonly target: string;
  readonly fingerprint: string;
  readonly status: AlertPayload["status"];
  readonly reason: AlertPayload["reason"];
  readonly summary: string;
  readonly silencedBy?: readonly string[];
}

/** The whole report of one backtest run (the `--json` document). */
export interface BacktestReport {
  readonly from: string;
  readonly to: string;
  readonly observations: number;
  readonly rules: readonly RuleTargetSummary[];
  readonly sinks: readonly Omit<SinkTally, "messages">[];
  readonly problems: readonly { readonly kind: string; readonly message: string; readonly at?: string }[];
  readonly complete: boolean;
  readonly timeline: readonly TimelineEntry[];
}

/** Labels that name the rule or come from outside, not the target. */
const NOT_TARGET_LABELS = new Set(["rule_id", "severity"]);

/** The rule's configured id: its `rule_id` label, else its kind. */
export function ruleIdOf(alert: AlertPayload): string {
  return alert.labels["rule_id"] ?? alert.rule;
}

/** The target of an alert as `name=value` labels, sorted (external labels excluded). */
export function targetOf(alert: AlertPayload, external: ReadonlySet<string>): string {
  return Object.entries(alert.labels)
    .filter(([name]) => !NOT_TARGET_LABELS.has(name) && !external.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join(",");
}

/** Build the report of a replay; `externalLabels` are left out of target names. */
export function summarise(
  result: ReplayResult,
  rules: readonly RuleConfig[],
  externalLabels: ReadonlySet<string>,
): BacktestReport {
  const flapWindow = new Map(rules.map((rule) => [rule.id, rule.flapWindowMs]));
  const rows = new Map<
    string,
    RuleTargetSummary & { openedAtMs: number | null; resolvedAtMs: number | null }
  >();
  const timeline: TimelineEntry[] = [];
  for (const { atMs, alert } of result.transitions) {
    const rule = ruleIdOf(alert);
    const target = targetOf(alert, externalLabels);
    timeline.push({
      at: new Date(atMs).toISOString(),
      rule,
      target,
      fingerprint: alert.fingerprint,
      status: alert.status,
      reason: alert.reason,
      summary: alert.summary,
      ...(alert.silencedBy === undefined ? {} : { silencedBy: alert.silencedBy }),
    });
    const row = rows.get(alert.fingerprint) ?? {
      rule,
      kind: alert.rule,
      target,
      fingerprint: alert.fingerprint,
      fired: 0,
      firingMs: 0,
      flaps: 0,
      openedAtMs: null,
      resolvedAtMs: null,
    };
    rows.set(alert.fingerprint, step(row, alert, atMs, flapWindow.get(rule) ?? 0));
  }
  const summaries = [...rows.values()].map(({ openedAtMs, resolvedAtMs: _r, ...row }) => ({
    ...row,
    firingMs: row.firingMs + (openedAtMs === null ? 0 : result.endMs - openedAtMs),
  }));
  summaries.sort((a, b) => compare(a.rule, b.rule) || compare(a.target, b.target));
  return {
    from: new Date(result.startMs).toISOString(),
    to: new Date(result.endMs).toISOString(),
    observations: result.observations,
    rules: summaries,
    sinks: result.sinks.map(({ messages: _m, ...tally }) => tally),
    problems: result.problems.map(problemView),
    complete: result.problems.length === 0,
    timeline,
  };
}

/** One transition applied to its row. */
function step<R extends RuleTargetSummary & { openedAtMs: number | null; resolvedAtMs: number | null }>(
  row: R,
  alert: AlertPayload,
  atMs: number,
  flapWindowMs: number,
): R {
  if (alert.status === "firing" && alert.reason === "first") {
    const flapped = row.resolvedAtMs !== null && atMs - row.resolvedAtMs <= flapWindowMs;
    return { ...row, fired: row.fired + 1, flaps: row.flaps + (flapped ? 1 : 0), openedAtMs: atMs };
  }
  if (alert.status === "resolved" && row.openedAtMs !== null)
    return { ...row, firingMs: row.firingMs + atMs - row.openedAtMs, openedAtMs: null, resolvedAtMs: atMs };
  return row;
}

/** A problem as the report shows it. */
function problemView(problem: ReplayProblem): { kind: string; message: string; at?: string } {
  return {
    kind: problem.kind,
    message: problem.message,
    ...(problem.at === undefined ? {} : { at: `${problem.at.file}:${problem.at.line}` }),
  };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
