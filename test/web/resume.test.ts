// The resume bookkeeping frame by frame: what each frame does to the resume point and what it means.
import { describe, expect, it } from "vitest";
import {
  FRESH_RESUME,
  noteFrame,
  onClose,
  onFirstSnapshot,
  onHello,
  type ResumeState,
} from "../../web/src/resume.js";
import type { ServerFrame } from "../../web/src/types.js";
import { alertEvent, lifecycle } from "./frames.js";

const resuming: ResumeState = { point: 10, subscribe: { since: 10, mode: "resume" }, answered: true };
const initial: ResumeState = { point: 0, subscribe: { since: 0, mode: "initial" }, answered: true };
const unanswered: ResumeState = { point: 10, subscribe: { since: 10, mode: "resume" }, answered: false };

describe("noteFrame", () => {
  it.each<[string, ResumeState, ServerFrame, number | null, string]>([
    ["a new event moves the point", resuming, alertEvent(11), 11, "new"],
    ["a lifecycle event too", resuming, lifecycle(12, "started"), 12, "new"],
    ["an event at the point is a duplicate", resuming, alertEvent(10), 10, "duplicate"],
    ["an older one too", resuming, alertEvent(3), 10, "duplicate"],
    ["a heartbeat moves the point once answered", resuming, { type: "heartbeat", seq: 40 }, 40, "none"],
    ["a pong too", resuming, { type: "pong", id: "p", seq: 41 }, 41, "none"],
    ["not before the subscribe is answered", unanswered, { type: "heartbeat", seq: 40 }, 10, "none"],
    ["never backwards", resuming, { type: "heartbeat", seq: 5 }, 10, "none"],
    ["a gap while resuming loses events", resuming, { type: "gap", from: 11, to: 20 }, 10, "reload"],
    [
      "a gap in the first history is only shorter history",
      initial,
      { type: "gap", from: 1, to: 20 },
      0,
      "history-truncated",
    ],
    [
      "a refused resume",
      resuming,
      { type: "error", id: "resume", code: "bad_request", message: "" },
      10,
      "reload",
    ],
    ["another error", resuming, { type: "error", id: "x", code: "bad_request", message: "" }, 10, "none"],
  ])("%s", (_name, state, frame, point, verdict) => {
    const result = noteFrame(state, frame);
    expect(result.verdict).toBe(verdict);
    expect(result.state.point).toBe(point);
  });

  it("a subscribe reply sets the point to its since (replay follows), or to its seq without one", () => {
    const withSince: ResumeState = {
      point: null,
      subscribe: { since: 300, mode: "initial" },
      answered: false,
    };
    expect(noteFrame(withSince, { type: "subscribed", id: "initial", seq: 500, active: [] }).state).toEqual({
      ...withSince,
      point: 300,
      answered: true,
    });
    const without: ResumeState = { point: null, subscribe: null, answered: false };
    expect(noteFrame(without, { type: "subscribed", id: "x", seq: 500, active: [] }).state.point).toBe(500);
  });
});

describe("connection steps", () => {
  it("fresh: snapshot first, then the history window; resuming: since = point; closing keeps the point", () => {
    expect(onHello(FRESH_RESUME, 9).send).toEqual({ op: "snapshot", id: "snapshot" });
    expect(onFirstSnapshot(FRESH_RESUME, 9).send).toMatchObject({ op: "subscribe", since: 0 });
    // a second snapshot answer (a refresh) does not subscribe again
    expect(onFirstSnapshot(initial, 9).send).toBeNull();
    const closed = onClose(resuming);
    expect(closed).toEqual({ point: 10, subscribe: null, answered: false });
    expect(onHello(closed, 10)).toMatchObject({ reload: false, send: { op: "subscribe", since: 10 } });
    expect(onHello(closed, 9)).toMatchObject({ reload: true, send: null });
  });
});
