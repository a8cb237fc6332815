// Silences shared through NATS KV: a member's changes are written to the bucket, every member watches it and takes
// the newer version of each silence, and a change time makes (a silence ends) is announced by the member that claims it.
import type { KV } from "@nats-io/kv";
import type { Logger } from "pino";
import type { Silence } from "../domain/silence.js";
import { silenceProblem } from "../domain/silence.js";
import { compareSilenceVersions } from "../domain/silence-set.js";
import { isMaintenanceSilenceId } from "../domain/maintenance.js";
import type { Silencer } from "../pipeline/silencer.js";
import { SILENCE } from "../state/silence-file.js";
import { casOrNull, type SharedBuckets } from "./shared-buckets.js";

/** What the sync needs: the member's buckets (undefined while not connected) and the local silencer. */
export interface SilenceSyncDeps {
  readonly buckets: () => SharedBuckets | undefined;
  readonly silencer: () => Pick<Silencer, "list" | "merge"> | undefined;
  readonly logger: Logger;
  readonly nowMs: () => number;
  /** A value read from the bucket was not a valid silence, and skipped (counted). */
  readonly invalid: () => void;
}

/** The silences of one member kept in step with the cluster's bucket. */
export interface SilenceSync {
  /** A silence this member stored (API put or expire): written to the bucket soon, retried until it is. */
  stored(silence: Silence): void;
  /** The silencer's `announceOnce`: run `announce` only when this member creates the claim (or NATS cannot say). */
  announceOnce(claim: string, announce: () => void): void;
  /** Push and watch from now on (a pass every `intervalMs`). */
  start(intervalMs: number): void;
  stop(): void;
}

/** The KV key of a silence id (ids are free text: base64url keeps them within KV's key characters). */
export function silenceKeyOf(id: string): string {
  return `silence.${Buffer.from(id, "utf8").toString("base64url")}`;
}

/** The KV key of a once-only claim. */
export function claimKeyOf(claim: string): string {
  return `claim.${Buffer.from(claim, "utf8").toString("base64url")}`;
}

/** A bucket value as a silence, or undefined when it is not a valid one. */
export function silenceOfText(text: string): Silence | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  const parsed = SILENCE.safeParse(value);
  if (!parsed.success || silenceProblem(parsed.data) !== null) return undefined;
  return isMaintenanceSilenceId(parsed.data.id) ? undefined : parsed.data;
}

interface SyncState {
  readonly deps: SilenceSyncDeps;
  /** Silences to write, by id (the latest version). */
  readonly dirty: Map<string, Silence>;
  /** The bucket being watched (a new one, or a watch that ended, starts a new watch). */
  watching: KV | undefined;
  /** Whether the stored silences were queued once after connecting (those changed while NATS was away). */
  seeded: boolean;
  pushing: boolean;
  /** A silence was stored during a pass: another pass runs as soon as this one ends (not a whole interval later). */
  again: boolean;
  /** `stop` was called: nothing more is written (a pass under way stops, no re-run starts) until `start`. */
  stopped: boolean;
  /** The last watch failed (logged once per streak: a pass re-watches every interval while NATS is away). */
  watchFailed: boolean;
  timer: NodeJS.Timeout | undefined;
}

const ENCODER = new TextEncoder();

/** Create the sync; nothing runs until `start`. */
export function createSilenceSync(deps: SilenceSyncDeps): SilenceSync {
  const state: SyncState = {
    deps,
    dirty: new Map(),
    watching: undefined,
    seeded: false,
    pushing: false,
    again: false,
    stopped: false,
    watchFailed: false,
    timer: undefined,
  };
  return {
    stored(silence) {
      state.dirty.set(silence.id, silence);
      if (state.stopped) return;
      if (state.pushing) state.again = true;
      else void pass(state);
    },
    announceOnce: (claim, announce) => announceOnce(state, claim, announce),
    start(intervalMs) {
      state.stopped = false;
      state.timer = setInterval(() => void pass(state), intervalMs).unref();
      void pass(state);
    },
    stop() {
      state.stopped = true;
      clearInterval(state.timer);
      state.timer = undefined;
    },
  };
}

/** Watch the bucket if not watching it, then write what is dirty (one pass at a time). */
async function pass(state: SyncState): Promise<void> {
  const buckets = state.deps.buckets();
  // a pass under way: the interval's tick is skipped (a slow NATS does not get passes back to back)
  if (buckets === undefined || state.pushing) return;
  if (state.watching !== buckets.silences) watch(state, buckets.silences);
  if (!state.seeded) {
    state.seeded = true;
    for (const view of state.deps.silencer()?.list() ?? [])
      if (!isMaintenanceSilenceId(view.id)) state.dirty.set(view.id, withoutStatus(view));
  }
  state.pushing = true;
  try {
    for (const id of [...state.dirty.keys()]) {
      if (state.stopped) break;
      // read at its turn: the latest version (a write awaited before it may have taken long)
      const silence = state.dirty.get(id);
      if (silence === undefined) continue;
      // a newer version stored while this one was written stays dirty, for the next pass
      if ((await push(state, buckets.silences, silence)) && state.dirty.get(id) === silence)
        state.dirty.delete(id);
    }
  } catch (error) {
    state.deps.logger.error({ err: error }, "cluster_error: cannot write a silence to NATS (retrying)");
  } finally {
    state.pushing = false;
  }
  if (state.again) {
    state.again = false;
    if (!state.stopped) void pass(state);
  }
}

/**
 * Write `silence` unless the bucket holds a version that wins over it or is it (compareSilenceVersions: then take
 * that one, however far ahead of this member's clock its `updatedAt` is: every member orders versions alike, so they
 * converge); false when another write won.
 */
async function push(state: SyncState, kv: KV, silence: Silence): Promise<boolean> {
  const key = silenceKeyOf(silence.id);
  const entry = await kv.get(key);
  const held = entry?.operation === "PUT" ? silenceOfText(entry.string()) : undefined;
  if (held !== undefined && compareSilenceVersions(held, silence) >= 0) {
    state.deps.silencer()?.merge(held);
    return true;
  }
  const value = ENCODER.encode(JSON.stringify(silence));
  const revision = await casOrNull(() =>
    entry === null ? kv.create(key, value) : kv.update(key, value, entry.revision),
  );
  return revision !== null;
}

/** Feed every silence the bucket holds, then every change, to the silencer; a watch that ends is restarted by a pass. */
function watch(state: SyncState, kv: KV): void {
  state.watching = kv;
  const run = async (): Promise<void> => {
    const entries = await kv.watch({ key: "silence.>" });
    for await (const entry of entries) {
      state.watchFailed = false;
      if (state.watching !== kv) break;
      if (entry.operation !== "PUT") continue;
      const silence = silenceOfText(entry.string());
      if (silence === undefined) {
        state.deps.logger.warn({ key: entry.key }, "cluster: invalid silence in NATS skipped");
        state.deps.invalid();
        continue;
      }
      if (!(state.deps.silencer()?.merge(silence) ?? false)) await dropIfPruned(state, kv, entry, silence);
    }
  };
  run()
    .catch((error: unknown) => {
      if (!state.watchFailed)
        state.deps.logger.warn({ err: error }, "cluster: watching the silences in NATS failed, re-watching");
      state.watchFailed = true;
    })
    .finally(() => {
      if (state.watching === kv) state.watching = undefined;
    });
}

/** Delete a silence from the bucket once the silencer no longer lists it (expired past the retention). */
async function dropIfPruned(
  state: SyncState,
  kv: KV,
  entry: { readonly key: string; readonly revision: number },
  silence: Silence,
): Promise<void> {
  const listed = state.deps.silencer()?.list() ?? [];
  if (listed.some((view) => view.id === silence.id)) return;
  if (Date.parse(silence.endsAt) > state.deps.nowMs()) return;
  await kv.delete(entry.key, { previousSeq: entry.revision }).catch(() => undefined);
}

/** Announce when this member creates the claim; a claim another member made is its to announce. */
function announceOnce(state: SyncState, claim: string, announce: () => void): void {
  const buckets = state.deps.buckets();
  // no NATS: at least once rather than never (another member may announce it too)
  if (buckets === undefined) return announce();
  const at = ENCODER.encode(new Date(state.deps.nowMs()).toISOString());
  casOrNull(() => buckets.claims.create(claimKeyOf(claim), at)).then(
    (revision) => {
      if (revision !== null) announce();
    },
    (error: unknown) => {
      state.deps.logger.warn({ err: error, claim }, "cluster: cannot claim an announcement in NATS");
      announce();
    },
  );
}

function withoutStatus(view: Silence & { readonly status?: unknown }): Silence {
  const { status: _status, ...silence } = view;
  return silence;
}
