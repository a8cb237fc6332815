// Imported first by main.ts (for its side effect, before any other module runs): the daemon's V8 heap settings.
import { setFlagsFromString } from "node:v8";

/**
 * Keep V8's heap near what is live for `run`, as every way of starting the daemon ships (npm start, the bin,
 * systemd, the image; no node flag needed):
 * - the old generation grows to ~1.25× the live heap before a full GC instead of its default (which lets a burst
 *   of garbage, e.g. a pipelined-request flood, take RSS to several times the live heap);
 * - the young generation stays at its initial size instead of growing to 32 MB (a fifth of the daemon's RSS at
 *   1 000 pairs). `--max-semi-space-size` only works on the node command line (V8 sizes that bound when the
 *   isolate is created), but the factor each growth step multiplies by is read at every step; it must be set
 *   before the other modules load, whose start-up garbage would already have grown the young generation.
 * Growth settings, not caps: neither can end the daemon with an OOM.
 */
export function keepHeapNearLive(): void {
  setFlagsFromString("--heap-growing-percent=25");
  setFlagsFromString("--semi-space-growth-factor=1");
}

// argv: [node, script, command, ...]
if (process.argv[2] === "run") keepHeapNearLive();
