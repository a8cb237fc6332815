// Atomic replace, sync and async: the same steps, the same private file, no temp file left behind.
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PRIVATE_FILE_MODE, writeFileAtomic, writeFileAtomicAsync } from "../../src/state/atomic-file.js";

const variants = [
  { name: "sync", write: (path: string, data: string) => Promise.resolve(writeFileAtomic(path, data)) },
  { name: "async", write: writeFileAtomicAsync },
];

describe.each(variants)("writeFileAtomic ($name)", ({ write }) => {
  it("replaces the file with a private one and leaves no temp file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pm-atomic-"));
    const path = join(dir, "state.json");
    writeFileSync(path, "old", { mode: 0o644 });
    await write(path, "new");
    expect(readFileSync(path, "utf8")).toBe("new");
    expect(statSync(path).mode & 0o777).toBe(PRIVATE_FILE_MODE);
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });

  it("creates a missing parent directory", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "pm-atomic-")), "sub", "state.json");
    await write(path, "x");
    expect(readFileSync(path, "utf8")).toBe("x");
  });
});
