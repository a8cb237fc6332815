// What the pipeline feeds the monitor: one poll outcome of a target, or warm-up history from candles.
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

/** One poll outcome (success or typed failure) of a target, or warm-up price history of an off-chain target. */
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
      target: TargetOf<"offchain">;
      points: readonly PricePoint[];
    };

/** A poll outcome (every observation but warm-up history). */
export type PollObservation = Exclude<Observation, { kind: "history" }>;
