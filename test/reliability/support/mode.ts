// Reliability suite sizing: short mode (CI, PM_RELIABILITY=short) or full mode, plus a seeded PRNG for fault schedules.

/** Which budget the suite runs with. */
export type ReliabilityMode = "short" | "full";

/** `PM_RELIABILITY=short|full` wins; otherwise short on CI (`CI=true`), full elsewhere. */
export function resolveMode(env: Readonly<Record<string, string | undefined>>): ReliabilityMode {
  const explicit = env["PM_RELIABILITY"];
  if (explicit === "short" || explicit === "full") return explicit;
  return env["CI"] === "true" || env["CI"] === "1" ? "short" : "full";
}

export const MODE: ReliabilityMode = resolveMode(process.env);

/** Pick the short-mode or full-mode value of a budget. */
export function budget<T>(short: T, full: T): T {
  return MODE === "short" ? short : full;
}

/** Base seed of every random schedule (override with PM_RELIABILITY_SEED to replay a failure). */
export const SEED = Number.parseInt(process.env["PM_RELIABILITY_SEED"] ?? "20261122", 10);

/** mulberry32: a small deterministic PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Integer in [min, max] from `random`. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
