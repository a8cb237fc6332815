// The cause pass: after the rules of a step ran, evaluate the cause rules over the engine's alerts, step their
// (parent) alerts, and link each pending or firing child to the firing parent that explains it (causedBy).
import { applyMeasure, type AlertRecord, type EngineState } from "./alert-engine.js";
import { NO_PEERS, type ClusterCauses } from "./cause-summary.js";
import type { AlertPayload } from "./events.js";
import type { Measure } from "./finding.js";
import { fingerprintOf } from "./fingerprint.js";
import type { TargetRegistry } from "./monitor-targets.js";
import { definitionOf, ruleLabels, type RuleConfig } from "./rules/index.js";

/** Parents depend on no target: inhibition never mutes them, removing a target never resolves them. */
const NO_TARGETS: readonly string[] = Object.freeze([]);

/**
 * Run the enabled cause rules (`causes`, in registry order) at `nowMs` and relink children (an adopted child
 * stays with its parent while the parent fires). `out` holds the
 * step's transitions so far; on return the parents' transitions come first, then the step's (a child's
 * firing carrying its new parent), then re-announcements (reason `repeat`) of firing children whose parent
 * changed: adopted by a parent that started firing, or left on their own by one that resolved.
 * In a cluster (`cluster`) the rules read the peers' summaries too, and a member that does not judge them steps no
 * parent: it links its children to the parents firing in the cluster's log (so does a judging one until its peers are ready).
 * Returns whether a parent it stepped is pending: time alone (its `for`) may fire it at the next pass.
 */
export function evaluateCauses(
  monitor: { readonly targets: TargetRegistry; readonly engine: EngineState },
  causes: readonly RuleConfig[],
  nowMs: number,
  out: AlertPayload[],
  cluster: ClusterCauses | null = null,
): boolean {
  if (causes.length === 0) return false;
  const { engine } = monitor;
  const judges = cluster === null || (cluster.judges && cluster.ready);
  const firing = judges
    ? (fingerprint: string) => engine.alerts.get(fingerprint)?.status === "firing"
    : (fingerprint: string) => cluster.firing.has(fingerprint);
  const parentsOut: AlertPayload[] = [];
  // child fingerprint → the first firing parent (registry order, then finding order) that adopts it
  const claims = new Map<string, string>();
  let pending = false;
  for (const rule of causes) {
    const cause = definitionOf(rule).cause;
    if (cause === null) continue;
    // most passes find no record of a cause rule: the engine's count says so without a walk over every alert
    const parents =
      (engine.recordsByRule.get(rule.id) ?? 0) === 0
        ? []
        : [...engine.alerts.values()].filter((r) => r.ruleId === rule.id && r.status !== "inactive");
    const findings = cause.evaluate({
      rule,
      alerts: engine.alerts,
      targets: monitor.targets.byId,
      pricePairs: monitor.targets.pricePairs,
      peers: cluster?.peers ?? NO_PEERS,
      parents,
      nowMs,
    });
    const extra = ruleLabels(rule);
    const judged = new Set<string>();
    for (const { measure, children } of findings) {
      const labels = { ...measure.extraLabels, ...extra };
      const fingerprint = fingerprintOf(rule.kind, labels);
      judged.add(fingerprint);
      if (judges) {
        applyMeasure(
          engine,
          { fingerprint, labels, targetIds: NO_TARGETS },
          measure,
          rule,
          nowMs,
          parentsOut,
        );
        pending ||= engine.alerts.get(fingerprint)?.status === "pending";
      }
      if (!firing(fingerprint)) continue;
      for (const child of children)
        if (!claims.has(child) && child !== fingerprint) claims.set(child, fingerprint);
    }
    // a parent the rule gave no verdict for has nothing left to explain
    for (const parent of parents)
      if (judges && !judged.has(parent.fingerprint))
        applyMeasure(
          engine,
          { fingerprint: parent.fingerprint, labels: parent.labels, targetIds: NO_TARGETS },
          cleared(parent, rule),
          rule,
          nowMs,
          parentsOut,
        );
  }
  const relinked = relink(engine, claims, firing, out);
  out.unshift(...parentsOut);
  out.push(...relinked);
  return pending;
}

/** Set each record's parent to its claim; return the re-announcements of firing records whose parent changed. */
function relink(
  engine: EngineState,
  claims: ReadonlyMap<string, string>,
  firing: (fingerprint: string) => boolean,
  out: AlertPayload[],
): AlertPayload[] {
  const relinked: AlertPayload[] = [];
  for (const record of engine.alerts.values()) {
    const parent = record.status === "inactive" ? null : parentOf(record, claims, firing);
    if (record.causedBy === parent) continue;
    record.causedBy = parent;
    if (record.status !== "firing" || record.announced === null) continue;
    // a firing announced in this very step carries its parent; an older one is announced again with it
    const index = out.findIndex((a) => a.fingerprint === record.fingerprint && a.status === "firing");
    if (index >= 0) {
      const linked = withCause(out[index]!, parent);
      out[index] = linked;
      record.announced = linked;
    } else {
      const again = withCause({ ...record.announced, reason: "repeat" }, parent);
      record.announced = again;
      relinked.push(again);
    }
  }
  return relinked;
}

/**
 * The parent of a pending or firing record: the one claiming it now, else the one that adopted it while that
 * still fires (a child held firing after its own condition cleared stays in its incident until the parent ends).
 */
function parentOf(
  record: AlertRecord,
  claims: ReadonlyMap<string, string>,
  firing: (fingerprint: string) => boolean,
): string | null {
  const claimed = claims.get(record.fingerprint);
  if (claimed !== undefined) return claimed;
  const previous = record.causedBy;
  return previous !== null && firing(previous) ? previous : null;
}

/** `alert` with exactly this parent (none: no `causedBy`). */
function withCause(alert: AlertPayload, parent: string | null): AlertPayload {
  const { causedBy: _previous, ...rest } = alert;
  return parent === null ? rest : { ...rest, causedBy: parent };
}

/** The measure of a parent whose rule reports nothing for it: cleared, its last text kept. */
function cleared(parent: AlertRecord, rule: RuleConfig): Measure {
  const summary = parent.announced?.summary ?? parent.fingerprint;
  return {
    kind: "measure",
    subKey: parent.scopeKey,
    scopeKey: parent.scopeKey,
    extraLabels: null,
    value: 0,
    threshold: rule.threshold,
    severity: parent.announced?.severity ?? rule.severity,
    fires: false,
    clears: true,
    relatedTargetId: null,
    describe: () => ({ summary: `cleared (was: ${summary})`, context: {} }),
  };
}
