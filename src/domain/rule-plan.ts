// Per-rules-array lookups computed once: rules by id, rules per target, history retention per target kind.
import { coversTarget } from "./rule-scope.js";
import type { RuleConfig } from "./rules/index.js";
import type { TargetSpec } from "./types.js";

/** Derived views of one rules array (the pipeline passes the same array until config reloads). */
export interface RulePlan {
  readonly byId: ReadonlyMap<string, RuleConfig>;
  /** Longest window per target kind that needs price history (0 = none). */
  readonly retainMs: { readonly offchain: number; readonly onchain: number; readonly vault: number };
  readonly perTarget: WeakMap<TargetSpec, readonly RuleConfig[]>;
  readonly rules: readonly RuleConfig[];
}

const plans = new WeakMap<readonly RuleConfig[], RulePlan>();

// The pipeline passes the same array on every call: remember the last one to skip the WeakMap.
let lastRules: readonly RuleConfig[] | null = null;
let lastPlan: RulePlan | null = null;

/** The plan of a rules array, built on first use. */
export function planFor(rules: readonly RuleConfig[]): RulePlan {
  if (rules === lastRules && lastPlan !== null) return lastPlan;
  let plan = plans.get(rules);
  if (plan === undefined) {
    plan = buildPlan(rules);
    plans.set(rules, plan);
  }
  lastRules = rules;
  lastPlan = plan;
  return plan;
}

function buildPlan(rules: readonly RuleConfig[]): RulePlan {
  const byId = new Map<string, RuleConfig>();
  const retainMs = { offchain: 0, onchain: 0, vault: 0 };
  for (const rule of rules) {
    if (!byId.has(rule.id)) byId.set(rule.id, rule);
    if (!rule.enabled) continue;
    if (rule.kind === "price_change") retainMs[rule.market] = Math.max(retainMs[rule.market], rule.windowMs);
    if (rule.kind === "vault_share_price") retainMs.vault = Math.max(retainMs.vault, rule.windowMs);
  }
  return { byId, retainMs, perTarget: new WeakMap(), rules };
}

/** Enabled rules that cover a target, upstream_error first so a recovery unmutes before the others run. */
export function rulesForTarget(plan: RulePlan, target: TargetSpec): readonly RuleConfig[] {
  let list = plan.perTarget.get(target);
  if (list === undefined) {
    const covering = plan.rules.filter(
      (rule) => plan.byId.get(rule.id) === rule && coversTarget(rule, target),
    );
    list = [
      ...covering.filter((rule) => rule.kind === "upstream_error"),
      ...covering.filter((rule) => rule.kind !== "upstream_error"),
    ];
    plan.perTarget.set(target, list);
  }
  return list;
}

/** History retention a target needs under a plan. */
export function retentionFor(plan: RulePlan, target: TargetSpec): number {
  switch (target.kind) {
    case "offchain":
      return plan.retainMs.offchain;
    case "onchain":
      return plan.retainMs.onchain;
    case "vault":
      return plan.retainMs.vault;
    case "publishers":
    case "funding":
      return 0;
  }
}
