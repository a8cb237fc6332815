// A recorded poll turned back into what the pipeline fed the engine: the same decoders, the same snapshot shapes, the same errors.
import { PmError } from "../domain/errors.js";
import type { TargetSpec } from "../domain/types.js";
import { fundingSnapshot } from "../pipeline/targets.js";
import type { RecordLineOf } from "../record/format.js";
import { decodeFundingRatePageBody } from "../upstream/funding-rates.js";
import { decodeOnchainEntrySetBody } from "../upstream/onchain.js";
import { decodePairPriceBody } from "../upstream/pair-price.js";
import { decodeOnchainPublishersBody } from "../upstream/publishers.js";
import { decodeVaultBody } from "../upstream/vault.js";

/** Decode a success body of the endpoint `spec` polls into the snapshot fetchTarget returns; throws the decoder's PmError. */
export function decodeSnapshot(spec: TargetSpec, body: string): unknown {
  switch (spec.kind) {
    case "offchain":
      return decodePairPriceBody(body);
    case "onchain":
      return decodeOnchainEntrySetBody(body);
    case "publishers":
      return decodeOnchainPublishersBody(body);
    case "funding":
      return fundingSnapshot(decodeFundingRatePageBody(body));
    case "vault":
      return decodeVaultBody(body);
  }
}

/** The failure a poll line records, as the PmError the engine saw (code and message are what alerts show). */
export function recordedFailure(line: RecordLineOf<"poll">): PmError {
  return new PmError(
    (line.code ?? "PM_ERR_UPSTREAM_NETWORK") as PmError["code"],
    line.message ?? "failed (no message recorded)",
    { retryable: line.retryable ?? true },
  );
}
