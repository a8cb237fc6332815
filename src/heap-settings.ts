// Imported first by main.ts (for its side effect, before any other module runs): the daemon's V8 heap settings.
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString, type HeapSpaceInfo } from "node:v8";
import { youngGenerationHolder } from "./young-generation.js";

/**
 * The young generation's size for `run`: V8 lets it grow to 32 MB (a fifth of the daemon's RSS at 1 000 pairs).
 * Measured at 500 pairs: at its initial 2 MB, GC took twice the CPU of the default (per-poll objects are promoted
 * before they die).
 */
const MAX_NEW_SPACE_BYTES = 8 * 1024 * 1024;

/**
 * Keep V8's heap near what is live for `run`, as every way of starting the daemon ships (npm start, the bin,
 * systemd, the image; no node flag needed):
 * - the old generation grows to ~1.25× the live heap before a full GC instead of its default (which lets a burst
 *   of garbage, e.g. a pipelined-request flood, take RSS to several times the live heap);
 * - the young generation is grown to MAX_NEW_SPACE_BYTES at once and then held there: it stops growing, and a check
 *   after each garbage collection lets it grow back when V8 has shrunk it (youngGenerationHolder). V8 resizes the
 *   young generation only at a collection, so a check after each one (within the same turn of the event loop) sees
 *   every shrink and holds growth again after the step it was set for; a timer would wake an idle daemon for nothing.
 *   `--max-semi-space-size` and `--min-semi-space-size` only work on the node command line (V8 sizes those bounds
 *   when the isolate is created), but the factor each growth step multiplies by is read at every step. The bin holds
 *   growth at 1 until this module runs, so start-up garbage cannot grow it first.
 * Growth settings, not caps: neither can end the daemon with an OOM.
 */
export function keepHeapNearLive(): void {
  setFlagsFromString("--heap-growing-percent=25");
  setFlagsFromString("--semi-space-growth-factor=2");
  growYoungGeneration(MAX_NEW_SPACE_BYTES);
  setFlagsFromString("--semi-space-growth-factor=1");
  const hold = youngGenerationHolder(MAX_NEW_SPACE_BYTES / 2, semiSpaceBytes, setFlagsFromString);
  // a `gc` observer is no handle: it never keeps the process alive
  new PerformanceObserver(() => hold()).observe({ entryTypes: ["gc"] });
}

/**
 * Grow the young generation to `bytes` (~25 ms): V8 grows it after collections that objects survived, so this makes
 * objects that live across a few collections until it is that large (or gives up after a bounded number).
 */
function growYoungGeneration(bytes: number): void {
  let survivors: { readonly i: number; readonly pair: readonly number[] }[] = [];
  for (let i = 0; i < 5_000_000 && (i % 1_000 !== 0 || newSpaceBytes() < bytes); i++) {
    survivors.push({ i, pair: [i, i] });
    if (survivors.length > 20_000) survivors = [];
  }
}

/** V8's statistics of the young generation (the `new_space` heap space), if it reports one. */
function newSpace(): HeapSpaceInfo | undefined {
  return getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
}

/** The young generation's size now (bytes): the memory committed for both of its halves (semi-spaces). */
function newSpaceBytes(): number {
  return newSpace()?.space_size ?? 0;
}

/**
 * The capacity of one half of the young generation (bytes): used + available, which does not depend on whether V8
 * has the other half committed just now (after a shrink it commits it again at the next scavenge).
 */
function semiSpaceBytes(): number {
  const space = newSpace();
  return space === undefined ? 0 : space.space_used_size + space.space_available_size;
}

// argv: [node, script, command, ...]
if (process.argv[2] === "run") keepHeapNearLive();
