// Journal invariants: seqs strictly increasing; per fingerprint, firing and resolved alternate starting with firing.
import { existsSync, readFileSync } from "node:fs";
import type { AlertEvent, JournaledEvent } from "../../../src/domain/events.js";

/** A journal file read line by line; a torn last line is what a kill -9 mid-append may leave. */
export interface JournalRead {
  readonly events: readonly JournaledEvent[];
  /** Unparseable lines other than the last one (damage a crash cannot explain). */
  readonly badLines: number;
  /** 1 when the last line is cut short. */
  readonly tornTail: number;
}

/** Parse `path` (missing file = empty). */
export function readJournal(path: string): JournalRead {
  if (!existsSync(path)) return { events: [], badLines: 0, tornTail: 0 };
  const lines = readFileSync(path, "utf8").split("\n");
  const events: JournaledEvent[] = [];
  let badLines = 0;
  let tornTail = 0;
  lines.forEach((line, index) => {
    if (line === "") return;
    try {
      events.push(JSON.parse(line) as JournaledEvent);
    } catch {
      if (index === lines.length - 1) tornTail = 1;
      else badLines += 1;
    }
  });
  return { events, badLines, tornTail };
}

/** Counts describing a journal. */
export interface JournalSummary {
  readonly events: number;
  readonly alertTransitions: number;
  readonly fingerprints: number;
  readonly firing: number;
  readonly resolved: number;
  readonly reminders: number;
}

/** Every violated invariant as a readable line (empty = consistent), plus counts. */
export function checkJournal(events: readonly JournaledEvent[]): {
  readonly problems: readonly string[];
  readonly summary: JournalSummary;
} {
  const problems: string[] = [];
  let lastSeq = 0;
  for (const event of events) {
    if (!(event.seq > lastSeq)) problems.push(`seq ${event.seq} does not increase (previous ${lastSeq})`);
    lastSeq = Math.max(lastSeq, event.seq);
  }
  const alerts = events.filter((e): e is AlertEvent => e.type === "alert");
  const byFingerprint = new Map<string, AlertEvent[]>();
  for (const event of alerts) {
    const list = byFingerprint.get(event.alert.fingerprint) ?? [];
    list.push(event);
    byFingerprint.set(event.alert.fingerprint, list);
  }
  let reminders = 0;
  for (const [fingerprint, list] of byFingerprint) {
    let expected: "firing" | "resolved" = "firing";
    for (const event of list) {
      if (event.alert.status === "firing" && event.alert.reason === "repeat" && expected === "resolved") {
        reminders += 1; // a reminder of a firing alert, not a transition
        continue;
      }
      if (event.alert.status !== expected)
        problems.push(
          `${event.alert.rule} ${fingerprint}: seq ${event.seq} is ${event.alert.status}/${event.alert.reason}, expected ${expected}`,
        );
      expected = event.alert.status === "firing" ? "resolved" : "firing";
    }
  }
  return {
    problems,
    summary: {
      events: events.length,
      alertTransitions: alerts.length - reminders,
      fingerprints: byFingerprint.size,
      firing: alerts.filter((e) => e.alert.status === "firing").length - reminders,
      resolved: alerts.filter((e) => e.alert.status === "resolved").length,
      reminders,
    },
  };
}

/** The dedupe key of a delivered transition (docs/webhooks.md: seq identifies it; status guards reuse). */
export const transitionKey = (event: AlertEvent): string => `${event.seq}:${event.alert.status}`;
