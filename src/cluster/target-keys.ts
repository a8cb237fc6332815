// Which ownership key each configured target belongs to, and each key's targets: one index, built when the targets change.

/** The two directions of the targets' ownership keys (they always agree: both read one index). */
export interface TargetKeys {
  /** The ownership key of a configured target; undefined: not configured. */
  readonly keyOfTarget: (targetId: string) => string | undefined;
  /** The configured targets of a key, in configuration order (none: a key of no target, such as the cause key). */
  readonly targetsOfKey: (key: string) => readonly string[];
}

/** The targets of a key the index does not hold. */
const NO_TARGETS: readonly string[] = [];

/** Index `[targetId, key]` pairs both ways, so a pass over some keys costs their targets, not every target. */
export function indexTargetKeys(targets: Iterable<readonly [targetId: string, key: string]>): TargetKeys {
  const keyById = new Map(targets); // (an id given twice: its last key, both ways)
  const idsByKey = new Map<string, string[]>();
  for (const [targetId, key] of keyById) {
    const ids = idsByKey.get(key);
    if (ids === undefined) idsByKey.set(key, [targetId]);
    else ids.push(targetId);
  }
  return {
    keyOfTarget: (targetId) => keyById.get(targetId),
    targetsOfKey: (key) => idsByKey.get(key) ?? NO_TARGETS,
  };
}
