// Cluster ownership as pure functions: rendezvous (highest random weight) hashing of targets over live members,
// and the handover rule that keeps a target from being polled by two members while its old owner lets go.
import { fnv1a64Hex } from "./fingerprint.js";

/** The member that owns `key` among `members` (undefined when there are none): highest hash of member + key wins. */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = "";
  for (const member of members) {
    // equal-length hex strings compare like the numbers they spell; ties (never seen) go to the smaller id
    const weight = fnv1a64Hex(`${member}\n${key}`);
    if (best === undefined || weight > bestWeight || (weight === bestWeight && member < best)) {
      best = member;
      bestWeight = weight;
    }
  }
  return best;
}

/** The keys `me` owns among `members` (empty when `me` is not one of them). */
export function ownedKeys(
  keys: readonly string[],
  members: readonly string[],
  me: string,
): ReadonlySet<string> {
  if (!members.includes(me)) return new Set();
  return new Set(keys.filter((key) => ownerOf(key, members) === me));
}

/** What a member owns and what it waits to take over, with the time each waited key becomes its own. */
export interface Ownership {
  readonly owned: ReadonlySet<string>;
  /** key → time (ms) from which it may be taken: a live member may still poll it until it sees the change. */
  readonly pendingUntilMs: ReadonlyMap<string, number>;
}

/** The inputs of one ownership step. */
export interface OwnershipStep {
  readonly keys: readonly string[];
  /** Live members now, and at the previous step (whose owners may still be working). */
  readonly members: readonly string[];
  readonly previousMembers: readonly string[];
  readonly me: string;
  readonly nowMs: number;
  /** How long a live member may take to notice it lost a key (its renew interval plus a scan). */
  readonly handoverWaitMs: number;
}

/**
 * The next ownership: keys `me` no longer owns are dropped at once; a key it gains is taken at once when
 * the member holding it before is gone (its lease expired), else only after `handoverWaitMs`, by when that
 * member has seen the new membership and stopped. So a join does not have two members polling one target.
 */
export function nextOwnership(current: Ownership, step: OwnershipStep): Ownership {
  const mine = ownedKeys(step.keys, step.members, step.me);
  const owned = new Set<string>();
  const pendingUntilMs = new Map<string, number>();
  const others = [...new Set([...step.previousMembers, ...step.members])].filter((m) => m !== step.me);
  for (const key of mine) {
    if (current.owned.has(key)) {
      owned.add(key);
      continue;
    }
    // who holds it if not me: among everyone seen now or last step (a member that just died is still in there)
    const previous = ownerOf(key, others);
    const handedByLive = previous !== undefined && step.members.includes(previous);
    const untilMs =
      current.pendingUntilMs.get(key) ?? (handedByLive ? step.nowMs + step.handoverWaitMs : step.nowMs);
    if (untilMs <= step.nowMs) owned.add(key);
    else pendingUntilMs.set(key, untilMs);
  }
  return { owned, pendingUntilMs };
}

/** Nothing owned, nothing pending. */
export const NO_OWNERSHIP: Ownership = { owned: new Set(), pendingUntilMs: new Map() };
