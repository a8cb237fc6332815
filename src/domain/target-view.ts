// Read-only view of one target's data for the operator API: labels, latest decoded value, data time, bounded history.
import type { AlertLabels } from "./events.js";
import { targetLabels } from "./rule-scope.js";
import type { Snapshot, TargetData } from "./target-state.js";
import type { TargetSpec } from "./types.js";

/** The latest value a target's snapshot holds, by what the target measures. */
export type LatestValue =
  | {
      readonly kind: "price";
      /** Exact decimal text. */
      readonly price: string;
      readonly comparable: boolean;
      readonly atMs: number;
      readonly numSources: number;
    }
  | {
      readonly kind: "publishers";
      readonly publishers: number;
      readonly feeds: number;
      readonly newestUpdateMs: number | null;
    }
  | { readonly kind: "funding"; readonly hourlyRate: number; readonly atMs: number }
  | {
      readonly kind: "vault";
      readonly status: string;
      readonly sharePrice: string;
      readonly tvl: string;
      readonly depositsPaused: boolean | null;
    };

/** One point of a history: a time and a value (a price's nearest double, or a rate). */
export interface ValuePoint {
  readonly atMs: number;
  readonly value: number;
}

/** What the monitor knows about one target's data. */
export interface TargetDataView {
  readonly spec: TargetSpec;
  /** When the latest successful poll was observed; null before one. */
  readonly lastSuccessMs: number | null;
  /** The data's own time (price timestamp, latest funding point, newest publisher update; a vault's is its poll); null without one. */
  readonly dataAtMs: number | null;
  readonly latest: LatestValue | null;
  /** At most `maxPoints`, oldest first. */
  readonly history: readonly ValuePoint[];
}

/** Labels saying what a target is: where its data comes from (as alerts label it) plus how it is requested. */
export function describeTargetLabels(spec: TargetSpec): AlertLabels {
  const base = targetLabels(spec);
  switch (spec.kind) {
    case "offchain":
      return {
        ...base,
        aggregation: spec.aggregation,
        interval: spec.interval,
        ...(spec.expiry === null ? {} : { expiry: spec.expiry }),
      };
    case "onchain":
      return { ...base, aggregation: spec.aggregation };
    case "publishers":
      return { ...base, publisher_type: spec.publisherType };
    case "funding":
    case "vault":
      return base;
  }
}

/**
 * Indices of at most `maxPoints` of `count` items, evenly spread, first and last always kept (a sparkline
 * of a longer series keeps its shape and its newest value).
 */
export function evenlySpacedIndices(count: number, maxPoints: number): readonly number[] {
  const max = Math.floor(maxPoints);
  if (count <= 0 || max <= 0) return [];
  if (count <= max) return Array.from({ length: count }, (_, index) => index);
  if (max === 1) return [count - 1];
  return Array.from({ length: max }, (_, index) => Math.round((index * (count - 1)) / (max - 1)));
}

/** The view of one target's data with at most `maxPoints` history points. */
export function describeTargetData(data: TargetData, maxPoints: number): TargetDataView {
  const lastSuccessMs = Number.isFinite(data.observedAtMs) ? data.observedAtMs : null;
  const { snapshot } = data;
  return {
    spec: data.spec,
    lastSuccessMs,
    dataAtMs: snapshot === null ? null : dataTimeOf(snapshot, lastSuccessMs),
    latest: snapshot === null ? null : latestOf(data, snapshot),
    history: historyOf(data, maxPoints),
  };
}

function dataTimeOf(snapshot: Snapshot, observedAtMs: number | null): number | null {
  switch (snapshot.kind) {
    case "offchain":
      return snapshot.value.timestampMs;
    case "onchain":
      return snapshot.value.lastUpdatedMs;
    case "publishers": {
      let newest: number | null = null;
      for (const entry of snapshot.value)
        if (entry.lastUpdatedMs !== null && (newest === null || entry.lastUpdatedMs > newest))
          newest = entry.lastUpdatedMs;
      return newest;
    }
    case "funding":
      return snapshot.value[snapshot.value.length - 1]?.timestampMs ?? null;
    case "vault":
      return observedAtMs;
  }
}

function latestOf(data: TargetData, snapshot: Snapshot): LatestValue | null {
  switch (snapshot.kind) {
    case "offchain":
    case "onchain": {
      const value = snapshot.value;
      const atMs = snapshot.kind === "offchain" ? snapshot.value.timestampMs : snapshot.value.lastUpdatedMs;
      return {
        kind: "price",
        price: value.price.text,
        comparable: data.priceComparable,
        atMs,
        numSources: value.numSources,
      };
    }
    case "publishers":
      return {
        kind: "publishers",
        publishers: snapshot.value.length,
        feeds: snapshot.value.reduce((sum, entry) => sum + entry.feeds.length, 0),
        newestUpdateMs: dataTimeOf(snapshot, null),
      };
    case "funding": {
      const last = snapshot.value[snapshot.value.length - 1];
      if (last === undefined || !Number.isFinite(last.hourlyRate)) return null;
      return { kind: "funding", hourlyRate: last.hourlyRate, atMs: last.timestampMs };
    }
    case "vault": {
      const vault = snapshot.value;
      return {
        kind: "vault",
        status: vault.status,
        sharePrice: vault.sharePrice,
        tvl: vault.tvl,
        depositsPaused: vault.depositConstraints.paused,
      };
    }
  }
}

// The price ring a windowed rule keeps, else the funding points of the latest poll; empty otherwise.
function historyOf(data: TargetData, maxPoints: number): readonly ValuePoint[] {
  const { history, snapshot } = data;
  // the nearest double of the exact text (the ring's own double may be off by an ulp: 100.50000000000001)
  if (history !== null && history.size > 0)
    return evenlySpacedIndices(history.size, maxPoints).flatMap((index) => {
      const value = Number(history.priceAt(index)?.text);
      return Number.isFinite(value) ? [{ atMs: history.timeAt(index), value }] : [];
    });
  if (snapshot?.kind === "funding") {
    const points = snapshot.value
      .filter((rate) => Number.isFinite(rate.hourlyRate))
      .map((rate) => ({ atMs: rate.timestampMs, value: rate.hourlyRate }));
    return evenlySpacedIndices(points.length, maxPoints).flatMap((index) => points[index] ?? []);
  }
  return [];
}
