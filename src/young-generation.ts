// The check that keeps V8's young generation at its size for `run` (heap-settings.ts); apart, so tests can load it.

/**
 * The check that keeps one half (semi-space) of the young generation near `targetBytes`; returns whether a growth
 * factor above 1 is set after it. After a full GC, V8 shrinks the young generation when the heap allocates little
 * (under ~1 MB/s: a daemon taking its prices from the stream), and with growth held at 1 it would stay small: a
 * scavenge every fraction of a second, every record that lives a second promoted, and GC most of that daemon's CPU.
 * Below half the target, the growth factor is set to the whole number of times the target holds the current size, so
 * that V8's next growth step (once enough bytes survived scavenges) takes it back towards the target and never past
 * it; otherwise growth is held at 1. The flag is set only when the factor changes.
 */
export function youngGenerationHolder(
  targetBytes: number,
  readBytes: () => number,
  setFlags: (flags: string) => void,
): () => boolean {
  let factor = 1;
  return () => {
    const currentBytes = readBytes();
    const times = currentBytes > 0 ? Math.floor(targetBytes / currentBytes) : 1;
    const wantedFactor = times >= 2 ? times : 1;
    if (wantedFactor !== factor) {
      factor = wantedFactor;
      setFlags(`--semi-space-growth-factor=${factor}`);
    }
    return factor > 1;
  };
}
