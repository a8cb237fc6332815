// Child process of journal-kill.test.ts: publishes through the real state store as fast as it can, compacting often.
import pino from "pino";
import { openStateStore } from "../../../src/state/state-store.js";

const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: journal-writer.ts STATE_DIR");
/** A tiny ring, so the journal file is rewritten every few batches. */
const JOURNAL_CAPACITY = 20;
const BATCH = 50;

const store = openStateStore({
  dir,
  journalCapacity: JOURNAL_CAPACITY,
  nowMs: Date.now,
  logger: pino({ level: "error" }, process.stderr),
});
const { journal } = store.recovered;
process.stdout.write(`start ${journal.lastSeq}\n`);

/** One batch of events, then report the last seq written and yield so the background compaction runs. */
function publishBatch(): void {
  for (let i = 0; i < BATCH; i++) {
    const event = journal.append({
      type: "lifecycle",
      event: "started",
      at: new Date().toISOString(),
      version: "0.0.0",
    });
    store.persistEvent(event);
  }
  process.stdout.write(`persisted ${journal.lastSeq}\n`);
  setImmediate(publishBatch);
}
publishBatch();
