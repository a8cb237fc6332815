// The check that keeps V8's young generation at its size for `run` (heap-settings.ts), apart so tests load it without that module's side effect.

/**
 * The check that keeps the young generation at `bytes`. After a full GC, V8 shrinks it when the heap allocates little
 * (under ~1 MB/s: a daemon taking its prices from the stream), and with growth held at 1 it would stay small: a
 * scavenge every fraction of a second, every record that lives a second promoted, and GC most of that daemon's CPU.
 * Below `bytes`, the growth factor is set so that V8's next growth step (after enough bytes survived scavenges) takes
 * it back in one step; at `bytes`, growth is held again. The flag is set only when the factor changes.
 */
export function youngGenerationHolder(
  bytes: number,
  readBytes: () => number,
  setFlags: (flags: string) => void,
): () => void {
  let factor = 1;
  return () => {
    const current = readBytes();
    const wanted = current > 0 && current < bytes ? Math.ceil(bytes / current) : 1;
    if (wanted === factor) return;
    factor = wanted;
    setFlags(`--semi-space-growth-factor=${factor}`);
  };
}
