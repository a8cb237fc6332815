// The fences of a cluster member: an upstream client and an event hub that refuse work while the member holds no valid lease.
import { PmError } from "../domain/errors.js";
import type { EventHub } from "../pipeline/event-hub.js";
import type { CallOptions, CandleCallOptions, PragmaClient } from "../upstream/types.js";

/** A client whose every call first checks the fence (a member back from SIGSTOP must not poll what it lost). */
export function fencedClient(client: PragmaClient, open: () => boolean): PragmaClient {
  const guard = <T>(call: () => Promise<T>): Promise<T> =>
    open()
      ? call()
      : Promise.reject(new PmError("PM_ERR_CLUSTER_FENCED", "no valid cluster lease: request not sent"));
  return {
    getPairPrice: (query, options?: CallOptions) => guard(() => client.getPairPrice(query, options)),
    getCandlesticks: (query, options?: CandleCallOptions) =>
      guard(() => client.getCandlesticks(query, options)),
    getFundingRates: (query, options?: CallOptions) => guard(() => client.getFundingRates(query, options)),
    async *iterateFundingRates(query, options?: CallOptions) {
      if (!open()) throw new PmError("PM_ERR_CLUSTER_FENCED", "no valid cluster lease: request not sent");
      yield* client.iterateFundingRates(query, options);
    },
    getOnchainEntry: (query, options?: CallOptions) => guard(() => client.getOnchainEntry(query, options)),
    getOnchainPublishers: (query, options?: CallOptions) =>
      guard(() => client.getOnchainPublishers(query, options)),
    getVault: (vaultId, options?: CallOptions) => guard(() => client.getVault(vaultId, options)),
  };
}

/**
 * The hub with `publishAlert` fenced (`published` is told after each transition let through); everything else
 * (getters included) delegates to the hub itself.
 */
export function fencedHub(
  hub: EventHub,
  open: () => boolean,
  published: () => void = () => undefined,
): EventHub {
  const fenced: EventHub = Object.create(hub) as EventHub;
  return Object.assign(fenced, {
    publishAlert: (alert: Parameters<EventHub["publishAlert"]>[0]) => {
      // a dropped transition is one the engine made without a lease: the owner's engine decides it
      if (!open()) return { type: "alert" as const, seq: hub.lastSeq(), alert };
      const event = hub.publishAlert(alert);
      published();
      return event;
    },
  });
}
