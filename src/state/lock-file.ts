// An exclusive pid lock on the state directory: two daemons must never interleave one journal and outbox.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { errorCode, PmError } from "../domain/errors.js";
import { PRIVATE_FILE_MODE } from "./atomic-file.js";

/** The running process as the lock sees it (injected: only main.ts touches `process`). */
export interface ProcessIdentity {
  readonly pid: number;
  isAlive(pid: number): boolean;
}

/** A held lock; release() removes the lock file. */
export interface StateLock {
  release(): void;
}

/** Take `<dir>/pragma-monitor.pid`; a lock left by a dead process is taken over, a live one refuses with PM_ERR_STATE_LOCKED. */
export function acquireStateLock(dir: string, self: ProcessIdentity): StateLock {
  const path = join(dir, "pragma-monitor.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", PRIVATE_FILE_MODE);
      writeSync(fd, `${self.pid}\n`);
      closeSync(fd);
      return { release: () => rmSync(path, { force: true }) };
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
      const holder = Number.parseInt(readFileSync(path, "utf8"), 10);
      if (Number.isInteger(holder) && holder !== self.pid && self.isAlive(holder)) {
        throw new PmError(
          "PM_ERR_STATE_LOCKED",
          `state directory ${dir} is in use by another pragma-monitor (pid ${holder})`,
        );
      }
      rmSync(path, { force: true }); // stale: its owner died (kill -9, crash) without releasing it
    }
  }
  throw new PmError("PM_ERR_STATE", `could not lock the state directory ${dir}`);
}
