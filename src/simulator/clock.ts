// Injected simulator time: a system clock running at a chosen speed, and a manual clock for tests.

/** Source of simulated time in unix milliseconds. */
export interface SimClock {
  nowMs(): number;
}

/** A clock tests move by hand. */
export interface ManualClock extends SimClock {
  set(timeMs: number): void;
  advance(deltaMs: number): void;
}

/** Sim time = startMs + real elapsed × speed (speed 1 = wall clock). */
export function createSystemClock(speed: number, startMs: number = Date.now()): SimClock {
  if (!(speed > 0) || !Number.isFinite(speed))
    throw new RangeError(`speed must be a positive number, got ${speed}`);
  const realStartMs = performance.now();
  return { nowMs: () => Math.floor(startMs + (performance.now() - realStartMs) * speed) };
}

/** A clock that only moves through `set` and `advance`. */
export function createManualClock(startMs: number): ManualClock {
  let currentMs = startMs;
  return {
    nowMs: () => currentMs,
    set: (timeMs) => {
      currentMs = timeMs;
    },
    advance: (deltaMs) => {
      currentMs += deltaMs;
    },
  };
}
