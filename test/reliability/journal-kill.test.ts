// kill -9 while the journal file is being compacted in the background: the file stays readable, contiguous and complete.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadJournalFile } from "../../src/state/journal-file.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRITER = join(ROOT, "test", "reliability", "support", "journal-writer.ts");
const KILLS = 12;

const dir = mkdtempSync(join(tmpdir(), "pm-journal-kill-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run the writer until it has persisted past `minSeq` plus a seeded extra, then SIGKILL it. */
async function runAndKill(extraMs: number): Promise<{ startSeq: number; reportedSeq: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", WRITER, dir], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let startSeq = -1;
  let reportedSeq = 0;
  let firstBatch: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (firstBatch = resolve));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const [kind, value] = line.split(" ");
    if (kind === "start") startSeq = Number(value);
    if (kind === "persisted") {
      reportedSeq = Number(value);
      firstBatch();
    }
  });
  await Promise.race([started, exited]);
  await new Promise((resolve) => setTimeout(resolve, extraMs));
  child.kill("SIGKILL");
  await exited;
  expect(stderr, "the writer logged an error").toBe("");
  return { startSeq, reportedSeq };
}

describe("journal compaction under kill -9", () => {
  it("leaves a readable, gap-free journal holding every event written before the kill, and seq continues", async () => {
    let lastSeqOnDisk = 0;
    let compacted = false;
    for (let run = 0; run < KILLS; run++) {
      const { startSeq, reportedSeq } = await runAndKill(20 + ((run * 37) % 180));
      expect(startSeq, `run ${run}: seq continues from the file`).toBe(lastSeqOnDisk);
      expect(reportedSeq).toBeGreaterThan(startSeq);
      const loaded = loadJournalFile(join(dir, "journal.jsonl"), 0);
      expect(loaded.quarantinedTo).toBeNull();
      expect(loaded.skippedLines, `run ${run}: at most a torn last line`).toBeLessThanOrEqual(1);
      const seqs = loaded.events.map((event) => event.seq);
      const gaps = seqs.filter((seq, i) => i > 0 && seq !== seqs[i - 1]! + 1);
      expect(gaps, `run ${run}: no event lost between the compacted head and the copied tail`).toEqual([]);
      expect(loaded.lastSeq, `run ${run}: everything reported written is on disk`).toBeGreaterThanOrEqual(
        reportedSeq,
      );
      if (seqs[0] !== undefined && seqs[0] > 1) compacted = true;
      lastSeqOnDisk = loaded.lastSeq;
    }
    expect(compacted, "the file was rewritten at least once").toBe(true);
  });
});
