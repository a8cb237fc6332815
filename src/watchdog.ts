// Event-loop watchdog: notices a stalled loop (logs how long) and reports health for the systemd watchdog.
import type { Logger } from "pino";

/** A running watchdog. */
export interface EventLoopWatchdog {
  stop(): void;
}

/**
 * Tick every `intervalMs`; a tick arriving more than `stallMs` late means the loop was blocked: log it.
 * `onHealthy` runs on each on-time tick, so a stalled loop stops the systemd `WATCHDOG=1` pings and gets restarted.
 */
export function createEventLoopWatchdog(options: {
  readonly logger: Logger;
  readonly nowMs: () => number;
  readonly onHealthy: () => void;
  readonly intervalMs?: number;
  readonly stallMs?: number;
}): EventLoopWatchdog {
  const intervalMs = options.intervalMs ?? 1_000;
  const stallMs = options.stallMs ?? 5_000;
  let expectedAtMs = options.nowMs() + intervalMs;
  const timer = setInterval(() => {
    const now = options.nowMs();
    const lagMs = now - expectedAtMs;
    expectedAtMs = now + intervalMs;
    if (lagMs > stallMs) options.logger.error({ lagMs }, "event loop stalled");
    else options.onHealthy();
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
