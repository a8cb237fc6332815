// systemd notification (READY=1, WATCHDOG=1, STOPPING=1) through `systemd-notify`, a no-op outside systemd.
import { execFile } from "node:child_process";

export type SystemdMessage = "READY=1" | "WATCHDOG=1" | "STOPPING=1";

/**
 * Build a notifier for `Type=notify` units (active only when NOTIFY_SOCKET is set). Node has no AF_UNIX
 * datagram sockets, so messages go through systemd-notify with `--pid` (the unit sets NotifyAccess=all).
 * WATCHDOG=1 pings are throttled to half of WatchdogSec.
 */
export function createSystemdNotifier(options: {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly pid: number;
  readonly nowMs: () => number;
  readonly exec?: (file: string, args: readonly string[]) => void;
}): (message: SystemdMessage) => void {
  const { env, pid, nowMs } = options;
  const exec = options.exec ?? ((file, args) => void execFile(file, args, () => undefined));
  const enabled = env.NOTIFY_SOCKET !== undefined && env.NOTIFY_SOCKET !== "";
  const watchdogIntervalMs = Number(env.WATCHDOG_USEC ?? "0") / 2000;
  let lastWatchdogMs = -Infinity;
  return (message) => {
    if (!enabled) return;
    if (message === "WATCHDOG=1") {
      if (!(watchdogIntervalMs > 0)) return;
      const now = nowMs();
      if (now - lastWatchdogMs < watchdogIntervalMs) return;
      lastWatchdogMs = now;
    }
    exec("systemd-notify", [`--pid=${pid}`, message]);
  };
}
