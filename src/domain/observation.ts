// What the pipeline feeds the monitor: one poll outcome of a target, or history points (candles, a stream, a cluster handover).
import type { Result } from "./errors.js";
import type { PricePoint } from "./price-history.js";
import type {
  FundingRate,
  OnchainEntrySet,
  OnchainPublisher,
  PairPrice,
  TargetSpec,
  Vault,
} from "./types.js";

type TargetOf<K extends TargetSpec["kind"]> = Extract<TargetSpec, { kind: K }>;

/** One poll outcome (success or typed failure) of a target, or past price points of a target (warm-up, handover). */
export type Observation =
  | {
      kind: "offchain";
      target: TargetOf<"offchain">;
      result: Result<PairPrice>;
      observedAtMs: number;
    }
  | {
      kind: "onchain";
      target: TargetOf<"onchain">;
      result: Result<OnchainEntrySet>;
      observedAtMs: number;
    }
  | {
      kind: "publishers";
      target: TargetOf<"publishers">;
      result: Result<readonly OnchainPublisher[]>;
      observedAtMs: number;
    }
  | {
      kind: "funding";
      target: TargetOf<"funding">;
      result: Result<readonly FundingRate[]>;
      observedAtMs: number;
    }
  | { kind: "vault"; target: TargetOf<"vault">; result: Result<Vault>; observedAtMs: number }
  | {
      kind: "history";
      target: TargetSpec;
      points: readonly PricePoint[];
      /**
       * Where the points come from, when not the target's own stream: `candles` (closes, kept only outside the
       * time range the history already covers: finer points win it) or `handover` (another cluster member's
       * history: points no window can use any more are dropped).
       */
      source?: "candles" | "handover";
    };

/** A poll outcome (every observation but warm-up history). */
export type PollObservation = Exclude<Observation, { kind: "history" }>;
