// What the daemon's hooks tell the recording: HTTP attempts (attributed to the target polling), poll outcomes, warm-up, stream events.
import { AsyncLocalStorage } from "node:async_hooks";
import { redactUrl } from "../config/redact.js";
import type { PmError } from "../domain/errors.js";
import type { RecordLine } from "./format.js";

/** One HTTP attempt as the transport saw it (see upstream/http.ts `onResponse`). */
export interface ResponseSample {
  readonly endpoint: string;
  readonly url: string;
  /** How long the attempt took: it started that long before it was recorded. */
  readonly durationMs: number;
  readonly status: number | null;
  readonly errorCode: string | null;
  readonly body: string | null;
}

/** The recorder the pipeline and the upstream client call; every method is cheap and never throws. */
export interface Recorder {
  /** Run `fetch` attributed to `target` (its HTTP attempts are recorded under that target and purpose). */
  within<T>(target: string, purpose: "poll" | "warmup", fetch: () => T): T;
  /** An HTTP attempt ended (with a response or not). */
  response(sample: ResponseSample): void;
  /** A poll's outcome was fed to the engine (or held, during the daemon's own stall). */
  polled(target: string, outcome: { ok: true } | { ok: false; error: PmError }, held: boolean): void;
  /** Warm-up history was fed to `target` from its last candlestick response. */
  warmedUp(target: string, interval: string, lookbackMs: number, asOfMs: number): void;
  /** The pipeline started ticking the alert engine every `tickMs`. */
  started(tickMs: number, upstream: string): void;
  /** An SSE message of the price stream as received (its URL redacted). */
  sse(message: { readonly url: string; readonly event: string; readonly data: string }): void;
  /** The stream fed `target`: a price (by its timestamp) or the history of the last SSE message, or went stale. */
  streamed(
    target: string,
    delivery:
      | { readonly event: "price"; readonly timestampMs: number }
      | { readonly event: "history" }
      | { readonly event: "stale"; readonly error: PmError },
  ): void;
}

/** Who is fetching, for the attempts made inside `within`. */
interface Attribution {
  readonly target: string;
  readonly purpose: "poll" | "warmup";
}

/** A recorder writing lines through `write`, stamping them with `nowMs` (the clock the alert engine reads). */
export function createRecorder(write: (line: RecordLine) => void, nowMs: () => number): Recorder {
  const context = new AsyncLocalStorage<Attribution>();
  const safe = (line: () => RecordLine): void => {
    try {
      write(line());
    } catch {
      // a recording is best effort: the daemon's work stands whatever happens here
    }
  };
  return {
    within: (target, purpose, fetch) => context.run({ target, purpose }, fetch),
    response(sample) {
      const who = context.getStore();
      safe(() => ({
        type: "response",
        atMs: nowMs(),
        requestAtMs: nowMs() - Math.round(sample.durationMs),
        target: who?.target ?? null,
        purpose: who?.purpose ?? null,
        endpoint: sample.endpoint,
        url: redactUrl(sample.url),
        status: sample.status,
        error: sample.errorCode,
        body: sample.body,
      }));
    },
    polled(target, outcome, held) {
      safe(() =>
        outcome.ok
          ? { type: "poll", atMs: nowMs(), target, ok: true }
          : {
              type: "poll",
              atMs: nowMs(),
              target,
              ok: false,
              code: outcome.error.code,
              message: outcome.error.message,
              retryable: outcome.error.retryable,
              ...(held ? { held } : {}),
            },
      );
    },
    warmedUp(target, interval, lookbackMs, asOfMs) {
      safe(() => ({ type: "warmup", atMs: nowMs(), target, interval, lookbackMs, asOfMs }));
    },
    started(tickMs, upstream) {
      safe(() => ({ type: "start", atMs: nowMs(), tickMs, upstream: redactUrl(upstream) }));
    },
    sse(message) {
      safe(() => ({
        type: "sse",
        atMs: nowMs(),
        url: redactUrl(message.url),
        event: message.event,
        data: message.data,
      }));
    },
    streamed(target, delivery) {
      safe(() => {
        const atMs = nowMs();
        if (delivery.event === "price")
          return { type: "stream", atMs, target, event: "price", timestampMs: delivery.timestampMs };
        if (delivery.event === "history") return { type: "stream", atMs, target, event: "history" };
        const { code, message } = delivery.error;
        return { type: "stream", atMs, target, event: "stale", code, message };
      });
    },
  };
}
