// One SSE price-stream connection kept open: eventsource-parser over undici, reconnecting with the house backoff.
//
// Why not undici's EventSource: it sends no headers of ours (User-Agent, which the live server needs, and
// x-api-key), prints an ExperimentalWarning, reports a 401/404/503 as a bare `error` event with no status,
// reconnects on its own fixed delay instead of our backoff, and hides comments (the keep-alives). The parser is
// the maintained one the EventSource polyfills use; the connection, its status and its limits stay ours.
import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";
import { Observable, asyncScheduler, type SchedulerLike, type Subscriber, type Subscription } from "rxjs";
import { request, type Dispatcher } from "undici";
import { delayMs, type BackoffPolicy } from "../backoff.js";
import { PmError, isPmError } from "../domain/errors.js";
import type { Interval } from "../domain/types.js";
import { USER_AGENT } from "../version.js";
import type { SkippedItemObserver } from "./decode.js";
import { asPmError, httpError } from "./http.js";
import { decodeStreamEvent, multiStreamPath, type StreamEvent } from "./multi-stream.js";

/** Where and what to stream, and how to behave when the connection fails. */
export interface MultiStreamOptions {
  /** Base URL of the /node/v1 endpoints. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly dispatcher: Dispatcher;
  readonly pairs: readonly string[];
  readonly interval: Interval;
  readonly historicalPrices: number;
  /** Deadline for the response headers (ms). */
  readonly connectTimeoutMs: number;
  /**
   * No event at all (keep-alives aside) for this long: the connection is dropped and reopened. The clock starts
   * when the response headers arrive (before that, `connectTimeoutMs` applies) and, until the first event is
   * complete, restarts on every chunk of body bytes: the first (historical) event can be megabytes that a loaded
   * server sends slowly, and a connection still receiving it is not silent.
   */
  readonly silenceMs: number;
  readonly reconnect: BackoffPolicy;
  /** Bound of the parser's buffer (one event's text). */
  readonly maxEventChars?: number;
  readonly random: () => number;
  readonly scheduler?: SchedulerLike;
  readonly onSkippedItem?: SkippedItemObserver;
  /** Told of each SSE message as received, before it is decoded (the recorder); absent costs nothing. */
  readonly onMessage?: (message: {
    readonly url: string;
    readonly event: string;
    readonly data: string;
  }) => void;
}

/**
 * What the stream reports: connected, bytes of a first event still arriving (progress), an event, a keep-alive
 * comment, or down (with the wait before reopening).
 */
export type StreamSignal =
  | { readonly kind: "connected" }
  | { readonly kind: "progress" }
  | { readonly kind: "event"; readonly event: Exclude<StreamEvent, { kind: "refused" }> }
  | { readonly kind: "keepalive" }
  | { readonly kind: "down"; readonly error: PmError; readonly reconnectInMs: number };

/** The default bound of one event: 1 000 pairs × 50 historical prices is about 10 MB of JSON. */
const DEFAULT_MAX_EVENT_CHARS = 32 * 1024 * 1024;
const MAX_ERROR_BODY_CHARS = 4_096;

/** The stream's reconnections: equal jitter from 500 ms up to `maxDelayMs`. */
export function streamReconnectBackoff(maxDelayMs: number): BackoffPolicy {
  return { jitter: "equal", baseDelayMs: 500, maxDelayMs, minDelayMs: 0, retryAfter: "lengthen" };
}

/**
 * Keep one stream open for as long as it is subscribed; never errors: every failure (HTTP status, network,
 * malformed event, the server's error event, silence, the server closing) is a `down` signal and the
 * connection is reopened after a backed-off wait. The attempt count resets once a price event arrives.
 */
export function multiStream$(options: MultiStreamOptions): Observable<StreamSignal> {
  return new Observable<StreamSignal>((subscriber) => {
    const connection = new StreamConnection(options, subscriber);
    connection.open();
    return () => connection.stop();
  });
}

/** The state of one subscription: the connection in flight, its silence timer, and failures in a row. */
class StreamConnection {
  private readonly scheduler: SchedulerLike;
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private controller: AbortController | null = null;
  private silence: Subscription | null = null;
  private retry: Subscription | null = null;
  private failures = 0;
  private stopped = false;
  /** Whether the current connection delivered a complete event (until then, body bytes count as progress). */
  private sawEvent = false;

  constructor(
    private readonly options: MultiStreamOptions,
    private readonly subscriber: Subscriber<StreamSignal>,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    const base = options.baseUrl.endsWith("/") ? options.baseUrl.slice(0, -1) : options.baseUrl;
    this.url = base + multiStreamPath(options.pairs, options.interval, options.historicalPrices);
    this.headers = { "user-agent": USER_AGENT, accept: "text/event-stream" };
    if (options.apiKey !== undefined && options.apiKey.length > 0) this.headers["x-api-key"] = options.apiKey;
  }

  /** Unsubscribed: abort the connection and forget every timer. */
  stop(): void {
    this.stopped = true;
    this.retry?.unsubscribe();
    this.silence?.unsubscribe();
    this.controller?.abort();
  }

  /** Open a connection; the promise never rejects (failures go to `fail`). */
  open(): void {
    if (this.stopped) return;
    const controller = new AbortController();
    this.controller = controller;
    this.sawEvent = false;
    void this.connect(controller).catch((error: unknown) => this.fail(controller, error));
  }

  private async connect(controller: AbortController): Promise<void> {
    const response = await request(this.url, {
      dispatcher: this.options.dispatcher,
      headers: this.headers,
      signal: controller.signal,
      headersTimeout: this.options.connectTimeoutMs,
      bodyTimeout: 0, // silence is judged on events (armSilence), not on bytes: keep-alives are bytes
    });
    if (response.statusCode !== 200) {
      const text = (await response.body.text()).slice(0, MAX_ERROR_BODY_CHARS);
      throw httpError("multi_stream", response.statusCode, text, response.headers["retry-after"], Date.now());
    }
    const type = String(response.headers["content-type"] ?? "");
    if (!type.startsWith("text/event-stream")) {
      await response.body.dump();
      throw new PmError(
        "PM_ERR_UPSTREAM_DECODE",
        `multi_stream: content-type ${type}, not text/event-stream`,
        {
          details: { endpoint: "multi_stream", field: "content-type" },
        },
      );
    }
    this.emit(controller, { kind: "connected" });
    this.armSilence(controller);
    let comment = false;
    const parser = createParser({
      maxBufferSize: this.options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS,
      onEvent: (message) => this.onMessage(controller, message),
      onComment: () => {
        comment = true;
        this.emit(controller, { kind: "keepalive" });
      },
      onError: (error: ParseError) => {
        if (error.type === "max-buffer-size-exceeded") this.fail(controller, tooLarge(error));
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      if (controller.signal.aborted) break;
      comment = false;
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      // a chunk of the first event still arriving is progress; a keep-alive alone is not (see `silenceMs`)
      if (!this.sawEvent && !comment && controller === this.controller) {
        this.armSilence(controller);
        this.emit(controller, { kind: "progress" });
      }
    }
    throw new PmError("PM_ERR_UPSTREAM_STREAM", "multi_stream: the server closed the stream", {
      retryable: true,
      details: { endpoint: "multi_stream" },
    });
  }

  /** One SSE message: decoded and passed on; a refusal or an undecodable body takes the connection down. */
  private onMessage(controller: AbortController, message: EventSourceMessage): void {
    if (controller !== this.controller) return;
    this.options.onMessage?.({ url: this.url, event: message.event ?? "", data: message.data });
    let event: StreamEvent;
    try {
      event = decodeStreamEvent(message, this.options.onSkippedItem);
    } catch (error) {
      this.fail(controller, error);
      return;
    }
    if (event.kind === "refused") {
      this.fail(controller, event.error);
      return;
    }
    this.sawEvent = true;
    this.armSilence(controller);
    if (event.kind === "prices") this.failures = 0;
    this.emit(controller, { kind: "event", event });
  }

  /** (Re)start the silence timer of this connection. */
  private armSilence(controller: AbortController): void {
    this.silence?.unsubscribe();
    const silenceMs = this.options.silenceMs;
    this.silence = this.scheduler.schedule(() => {
      const error = new PmError(
        "PM_ERR_UPSTREAM_STREAM_STALE",
        `multi_stream: no event for ${silenceMs} ms`,
        {
          retryable: true,
          details: { endpoint: "multi_stream" },
        },
      );
      this.fail(controller, error);
    }, silenceMs);
  }

  /** The connection failed (once): abort it, report down, and schedule the next one. */
  private fail(controller: AbortController, error: unknown): void {
    if (this.stopped || controller !== this.controller) return;
    this.controller = null;
    this.silence?.unsubscribe();
    controller.abort();
    this.failures++;
    const failure = isPmError(error) ? error : asPmError("multi_stream", error);
    const reconnectInMs = delayMs(
      this.options.reconnect,
      this.failures,
      this.options.random,
      failure.details.retryAfterMs,
    );
    this.subscriber.next({ kind: "down", error: failure, reconnectInMs });
    this.retry = this.scheduler.schedule(() => this.open(), reconnectInMs);
  }

  private emit(controller: AbortController, signal: StreamSignal): void {
    if (!this.stopped && controller === this.controller) this.subscriber.next(signal);
  }
}

function tooLarge(error: ParseError): PmError {
  return new PmError("PM_ERR_UPSTREAM_DECODE", `multi_stream: event larger than the buffer bound`, {
    details: { endpoint: "multi_stream", field: "data" },
    cause: error,
  });
}
