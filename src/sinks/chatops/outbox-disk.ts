// The disk side of an outbox: one writer appending and fsyncing lines, rewriting the file atomically, keeping the dead letters.
import { open, rename, stat, type FileHandle } from "node:fs/promises";
import type { Logger } from "pino";
import { errorCode, PmError } from "../../domain/errors.js";
import { PRIVATE_FILE_MODE, writeFileAtomicAsync } from "../../state/atomic-file.js";

/** The disk side of an outbox: one writer, every operation serialised in call order. */
export interface OutboxDisk {
  /** Run `op` after every earlier one; a failure is logged (the outbox goes on in memory), never thrown. */
  run(op: () => Promise<void>): Promise<void>;
  /** Append and fsync lines to the outbox file. */
  append(lines: readonly string[]): Promise<void>;
  /** Replace the outbox file atomically with `text`; appends go to the new file. */
  rewrite(text: string): Promise<void>;
  /** Append and fsync `text` to the dead-letter file, rotating it to `.1` past its size bound. */
  appendDead(text: string): Promise<void>;
  /**
   * Settle once every operation queued before it, or while it waits, is done (on disk, or failed and logged), then
   * close the append handle; an operation queued after that is refused (logged, code PM_ERR_STATE), never run.
   */
  close(): Promise<void>;
}

/** The disk writer of one outbox: the append handle, the serialising chain and the dead-letter file size. */
export async function openOutboxDisk(options: {
  readonly file: string;
  readonly deadFile: string;
  readonly maxDeadBytes: number;
  readonly logger: Logger;
}): Promise<OutboxDisk> {
  const { file, deadFile, maxDeadBytes, logger } = options;
  let chain: Promise<void> = Promise.resolve();
  let handle: FileHandle | undefined;
  let closed = false;
  let deadBytes = await stat(deadFile).then(
    (s) => s.size,
    () => 0,
  );
  return {
    run(op) {
      chain = chain
        .then(() => (closed ? Promise.reject(closedError(file)) : op()))
        .catch((err: unknown) => {
          logger.error({ code: errorCode(err) ?? "unknown", err }, "outbox write failed");
        });
      return chain;
    },
    async append(lines) {
      if (lines.length === 0) return;
      handle ??= await open(file, "a", PRIVATE_FILE_MODE);
      await handle.appendFile(lines.join(""));
      await handle.sync();
    },
    async rewrite(text) {
      await writeFileAtomicAsync(file, text);
      await handle?.close();
      handle = undefined; // reopened on the next append, on the new file
    },
    async appendDead(text) {
      if (deadBytes + text.length > maxDeadBytes && deadBytes > 0) {
        await rename(deadFile, `${deadFile}.1`);
        deadBytes = 0;
      }
      const out = await open(deadFile, "a", PRIVATE_FILE_MODE);
      try {
        await out.appendFile(text);
        await out.sync();
      } finally {
        await out.close();
      }
      deadBytes += text.length;
    },
    async close() {
      // a shutdown that returns before a queued write lands loses it (an outbox entry, a tombstone)
      let settled: Promise<void>;
      do {
        settled = chain;
        await settled;
      } while (settled !== chain);
      closed = true;
      await handle?.close();
      handle = undefined;
    },
  };
}

/** The error an operation queued after close() fails with: it would reopen the file behind the closed handle. */
function closedError(file: string): PmError {
  return new PmError("PM_ERR_STATE", `outbox ${file} is closed: a write queued after close() was not made`);
}
