// Crash-safe file primitives: atomic replace (temp, fsync, rename, fsync dir) and quarantine of unreadable files.
import {
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

/** Replace `path` with `data` atomically: a reader (or a restart after kill -9) sees the old or the new file, never a mix. */
export function writeFileAtomic(path: string, data: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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

/** Move an unreadable file aside as `<name>.corrupt-<timestamp>` and return the new path. */
export function quarantine(path: string, nowMs: number): string {
  const aside = `${path}.corrupt-${new Date(nowMs).toISOString().replace(/[:.]/g, "-")}`;
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
