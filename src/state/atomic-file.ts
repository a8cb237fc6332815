// Crash-safe file primitives: atomic replace (temp, fsync, rename, fsync dir) and quarantine of unreadable files.
import { open } from "node:fs/promises";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  renameSync,
  writeSync,
  existsSync,
  readFileSync,
  mkdirSync,
} from "node:fs";
import { dirname, join, basename } from "node:path";

/** State is private: alerts, journal and outboxes (sink payloads, webhook bodies) are the operator's alone. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Create `dir` (and missing parents) with mode 0700; unless `tighten` is false, make an existing one 0700 too. */
export function ensurePrivateDir(dir: string, tighten = true): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!tighten) return;
  try {
    chmodSync(dir, PRIVATE_DIR_MODE);
  } catch {
    // not ours to change (another owner): it was created before, by someone else
  }
}

/** Make an existing state file private (files written by versions before 0600 was the rule); absent is fine. */
export function tightenFile(path: string): void {
  try {
    chmodSync(path, PRIVATE_FILE_MODE);
  } catch {
    // missing, or not ours to change
  }
}

/** Replace `path` with `data` atomically: a reader (or a restart after kill -9) sees the old or the new file, never a mix. */
export function writeFileAtomic(path: string, data: string): void {
  const temp = tempPathOf(path);
  const fd = openSync(temp, "w", PRIVATE_FILE_MODE);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  publishTemp(temp, path);
}

/** `writeFileAtomic` off the event loop: the same steps, the data written and fsync'd asynchronously. */
export async function writeFileAtomicAsync(path: string, data: string): Promise<void> {
  const temp = tempPathOf(path);
  const out = await open(temp, "w", PRIVATE_FILE_MODE);
  try {
    await out.writeFile(data);
    await out.sync();
  } finally {
    await out.close();
  }
  publishTemp(temp, path);
}

/** The first step of an atomic write: a private directory and a temp name beside `path`, one per process. */
function tempPathOf(path: string): string {
  ensurePrivateDir(dirname(path), false);
  return join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
}

/** The last steps of an atomic write: rename the fsync'd temp file over `path`, then make the rename durable. */
function publishTemp(temp: string, path: string): void {
  renameSync(temp, path);
  fsyncDirectory(dirname(path));
}

/** fsync a directory so a rename in it is durable (best effort where the platform refuses). */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // some filesystems refuse fsync on directories; the rename is still atomic
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Where an unreadable state file is moved: `<path>.corrupt-<UTC time>`, e.g. `journal.jsonl.corrupt-2026-11-22T10-00-00-000Z`
 * (ISO 8601 with `:` and `.` replaced, so it is a valid file name everywhere and sorts by time). The one format for
 * the journal, the alert checkpoint and the outboxes.
 */
export function quarantinePath(path: string, nowMs: number): string {
  return `${path}.corrupt-${new Date(nowMs).toISOString().replace(/[:.]/g, "-")}`;
}

/** Move an unreadable file aside (see `quarantinePath`) and return the new path. */
export function quarantine(path: string, nowMs: number): string {
  const aside = quarantinePath(path, nowMs);
  renameSync(path, aside);
  return aside;
}

/** Outcome of reading a JSON state file. */
export type JsonFileRead =
  | { readonly kind: "missing" }
  | { readonly kind: "ok"; readonly value: unknown }
  | { readonly kind: "corrupt"; readonly movedTo: string; readonly reason: string };

/** Read and parse a JSON file; a file that cannot be read or parsed is quarantined rather than thrown. */
export function readJsonFile(path: string, nowMs: number): JsonFileRead {
  if (!existsSync(path)) return { kind: "missing" };
  try {
    return { kind: "ok", value: JSON.parse(readFileSync(path, "utf8")) as unknown };
  } catch (error) {
    return {
      kind: "corrupt",
      movedTo: quarantine(path, nowMs),
      reason: error instanceof Error ? error.message : String(error),
    };
  }
}
