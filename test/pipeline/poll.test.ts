// Marble tests of poll$: no overlap on slow responses, start-to-start period, backoff, recovery, Retry-After, timeout and teardown.
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { asyncScheduler, map, type Observable } from "rxjs";
import { PmError } from "../../src/domain/errors.js";
import type { PollClock } from "../../src/pipeline/coalescing-clock.js";
import { nextPollDelayMs, poll$, type PollOptions, type PollOutcome } from "../../src/pipeline/poll.js";

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const base: Omit<PollOptions, "scheduler"> = {
  periodMs: 10,
  jitter: 0,
  spreadMs: 0,
  maxBackoffMs: 80,
  timeoutMs: 50,
  random: () => 0.5,
};
/** A target taken over: its first poll at once, then a random phase of 4 ms (min(spreadMs, periodMs) * 0.4). */
const AT_ONCE = { ...base, spreadMs: 1_000, random: () => 0.4, firstAtOnce: true };
const summarise = (o$: Observable<PollOutcome<string>>) =>
  o$.pipe(map((o) => (o.ok ? o.value : `${o.error.code}#${o.consecutiveFailures}`)));

describe("poll$", () => {
  it("waits for a slow response before scheduling the next poll (never overlaps)", () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const slow = cold("15ms (a|)");
      const result$ = poll$(() => slow, base).pipe(map((o) => (o.ok ? o.value : "x")));
      // each poll takes 15 ms, longer than the 10 ms period: the next one starts as soon as the previous one
      // completed (0, 15, 30, 45, 60; the last one torn down at 61), never while one is in flight
      expectObservable(result$, "^ 60ms !").toBe("15ms a 14ms a 14ms a 14ms a");
      expectSubscriptions(slow.subscriptions).toBe([
        "^ 14ms !",
        "15ms ^ 14ms !",
        "30ms ^ 14ms !",
        "45ms ^ 14ms !",
        "60ms ^ !",
      ]);
    });
  });

  it("keeps the period start to start when responses are faster than the period", () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const fast = cold("3ms (a|)");
      const result$ = poll$(() => fast, base).pipe(map((o) => (o.ok ? o.value : "x")));
      // polls start at 0, 10, 20 (not 0, 13, 26): the 3 ms of each request count towards the period
      expectObservable(result$, "^ 25ms !").toBe("3ms a 9ms a 9ms a");
      expectSubscriptions(fast.subscriptions).toBe(["^ 2ms !", "10ms ^ 2ms !", "20ms ^ 2ms !"]);
    });
  });

  it("waits the whole backoff after a failed poll ends, however long it took", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let call = 0;
      const fail = cold<string>(
        "5ms #",
        undefined,
        new PmError("PM_ERR_UPSTREAM_HTTP", "boom", { retryable: true }),
      );
      const result$ = summarise(poll$(() => (++call === 1 ? fail : cold("(a|)")), base));
      // fails at 5, backoff 10 from the end (not from the start): next poll at 15
      expectObservable(result$, "^ 20ms !").toBe("5ms x 9ms a", { x: "PM_ERR_UPSTREAM_HTTP#1", a: "a" });
    });
  });

  it("backs off exponentially while failing and resets on recovery", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let call = 0;
      const fail = cold<string>(
        "#",
        undefined,
        new PmError("PM_ERR_UPSTREAM_HTTP", "boom", { retryable: true }),
      );
      const ok = cold("(a|)");
      const result$ = summarise(poll$(() => (++call <= 3 ? fail : ok), base));
      // failures at 0, 10 (backoff 10), 25 (backoff 20×0.75), success at 55 (backoff 40×0.75), then period 10
      expectObservable(result$, "^ 85ms !").toBe("x 9ms y 14ms z 29ms a 9ms a 9ms a 9ms a", {
        x: "PM_ERR_UPSTREAM_HTTP#1",
        y: "PM_ERR_UPSTREAM_HTTP#2",
        z: "PM_ERR_UPSTREAM_HTTP#3",
        a: "a",
      });
    });
  });

  it("honours Retry-After when it is longer than the backoff", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let call = 0;
      const limited = cold<string>(
        "#",
        undefined,
        new PmError("PM_ERR_UPSTREAM_HTTP", "429", {
          retryable: true,
          details: { status: 429, retryAfterMs: 60 },
        }),
      );
      const result$ = summarise(poll$(() => (++call === 1 ? limited : cold("(a|)")), base));
      expectObservable(result$, "^ 65ms !").toBe("x 59ms a", { x: "PM_ERR_UPSTREAM_HTTP#1", a: "a" });
    });
  });

  it("turns a hung request into a timeout value and unsubscribes it", () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const hung = cold("-");
      const result$ = summarise(poll$(() => hung, { ...base, timeoutMs: 20 }));
      expectObservable(result$, "^ 25ms !").toBe("20ms t", { t: "PM_ERR_UPSTREAM_TIMEOUT#1" });
      expectSubscriptions(hung.subscriptions).toBe(["^ 19ms !"]);
    });
  });

  it("aborts the in-flight request when unsubscribed (teardown)", () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals: AbortSignal[] = [];
      const slow = cold("30ms (a|)");
      const result$ = poll$((signal) => {
        signals.push(signal);
        return slow;
      }, base);
      expectObservable(result$, "^ 10ms !").toBe("");
      expectSubscriptions(slow.subscriptions).toBe(["^ 10ms !"]);
    });
  });

  it("starts at a random phase within min(spreadMs, period) and keeps it", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const result$ = summarise(poll$(() => cold("(a|)"), { ...base, spreadMs: 1_000, random: () => 0.4 }));
      // offset min(1000, 10) * 0.4 = 4, then exactly every period: 4, 14, 24
      expectObservable(result$, "^ 25ms !").toBe("4ms a 9ms a 9ms a");
    });
  });

  it("starts at once with firstAtOnce, the later polls at the random phase, the second within a period", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const result$ = summarise(poll$(() => cold("(a|)"), AT_ONCE));
      // planned as if started min(1000, 10) * 0.4 = 4 ms earlier: 0, then 6, 16, 26
      expectObservable(result$, "^ 27ms !").toBe("a 5ms a 9ms a 9ms a");
    });
  });

  it("with firstAtOnce, a first poll that ends past its phase is followed at the next phase, not at once", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let call = 0;
      const result$ = summarise(poll$(() => (++call === 1 ? cold("8ms (a|)") : cold("(b|)")), AT_ONCE));
      // phase 4 ms before the start (6, 16, 26 ...); the first poll ends at 8, past 6: the second at 16, then 26
      expectObservable(result$, "^ 27ms !").toBe("8ms a 7ms b 9ms b");
    });
  });

  it("with firstAtOnce, a later poll that took longer than the period is followed at once, as any poll", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let call = 0;
      const result$ = summarise(poll$(() => (++call === 2 ? cold("12ms (b|)") : cold("(a|)")), AT_ONCE));
      // 0, then 6 (takes 12 ms, ends at 18, past 16): the third at once at 18, and its phase from then on: 28
      expectObservable(result$, "^ 29ms !").toBe("a 17ms (ba) 6ms a");
    });
  });

  it("with firstAtOnce, a failed first poll retries after its backoff plus its phase offset", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let call = 0;
      const error = new PmError("PM_ERR_UPSTREAM_HTTP", "boom", { retryable: true });
      const result$ = summarise(
        poll$(() => (++call === 1 ? cold<string>("#", undefined, error) : cold("(a|)")), AT_ONCE),
      );
      // fails at 0: backoff 10 plus the offset 4, so targets failing together retry at their own phases
      expectObservable(result$, "^ 15ms !").toBe("x 13ms a", { x: "PM_ERR_UPSTREAM_HTTP#1", a: "a" });
    });
  });

  it("jitters each start around the plan, so the phase drifts only by the jitter", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const result$ = summarise(poll$(() => cold("(a|)"), { ...base, jitter: 0.5, random: () => 0.8 }));
      // 10 * (1 + 0.5 * 0.3) = 11.5 → 12 after each planned start: 0, 12, 24
      expectObservable(result$, "^ 25ms !").toBe("a 11ms a 11ms a");
    });
  });

  it("plans from the previous plan, so timers that fire late do not make the phase drift", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // a clock whose timers all fire 2 ms late, like a busy event loop
      const late: PollClock = {
        now: () => asyncScheduler.now(),
        schedule: (work, delayMs) => asyncScheduler.schedule(work, delayMs + 2),
      };
      const result$ = summarise(poll$(() => cold("(a|)"), { ...base, scheduler: late }));
      // planned 0, 10, 20, 30: started at 0, 12, 22, 32 (not 0, 12, 24, 36)
      expectObservable(result$, "^ 35ms !").toBe("a 11ms a 9ms a 9ms a");
    });
  });
});

describe("nextPollDelayMs", () => {
  it.each([
    [0, undefined, 10],
    [1, undefined, 10],
    [2, undefined, 20],
    [5, undefined, 80],
    [9, undefined, 80],
    [1, 70, 70],
    [1, 500, 80],
  ])("after %i failures (Retry-After %s) waits %i ms", (failures, retryAfter, expected) => {
    expect(nextPollDelayMs({ ...base, random: () => 1 }, failures, retryAfter)).toBe(expected);
  });
});
