// Outbound HTTP for the upstream client and the chat-ops sinks alike, on the shared undici dispatcher: a deadline, a body cap, the caller's abort signal, errors with a literal code.
//
// Runs on undici's `dispatch()` handler API rather than `request()`: no Readable body stream, no async
// iterator, no per-request AbortController and no AsyncResource, which were a large share of the CPU of a
// daemon polling 500 targets every second (docs/benchmarks.md). The deadline and the caller's signal abort
// the request through undici's own dispatch controller. Per request: one promise, one Exchange, two small
// callbacks and undici's options (the URL is split once per target by the caller, see httpTarget); a caller's signal costs one listener for all its requests.
import type { Dispatcher } from "undici";

/** Injectable timer functions (virtual time in tests). */
export interface Timers {
  readonly setTimer: (callback: () => void, delayMs: number) => unknown;
  readonly clearTimer: (handle: unknown) => void;
}

/** Node's own timers. */
const REAL_TIMERS: Timers = {
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The pool and the limits every request sent through it obeys; built once per user, not per request. */
export interface HttpClient {
  readonly dispatcher: Dispatcher;
  /** Largest 2xx body read, in bytes; beyond it the request is aborted and the response marked truncated. */
  readonly maxBodyBytes: number;
  /** Largest body of any other status read, in bytes (enough for an error message or a retry hint). */
  readonly maxErrorBodyBytes: number;
  /** Timers of the deadline; Node's own unless given. */
  readonly timers?: Timers;
}

/** Where a request goes, as undici's dispatch takes it: split from a URL once, reusable for every request. */
export interface HttpTarget {
  readonly origin: string;
  /** Path and query string. */
  readonly path: string;
}

/** Split `url` into the origin and path undici dispatches to (throws on a URL `new URL` refuses). */
export function httpTarget(url: string): HttpTarget {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: parsed.pathname + parsed.search };
}

/** One request: where (a URL, or a target split from one once), how, with which headers and body. */
export interface HttpRequest {
  readonly url: string | HttpTarget;
  /** GET unless set. */
  readonly method?: "GET" | "HEAD" | "POST" | "DELETE";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** A response read up to its cap. */
export interface HttpResponse {
  readonly status: number;
  readonly text: string;
  /** The body was larger than its cap: `text` holds what came before the chunk that crossed it. */
  readonly truncated: boolean;
  readonly retryAfter: string | string[] | undefined;
}

/** What a request got before it settled: the final status, once its headers came. */
export interface HttpProgress {
  status: number | null;
}

/** Why a request was cut short: its own deadline, or the caller's signal. Matched by `code`. */
export class HttpClientError extends Error {
  override readonly name = "HttpClientError";
  readonly code: "PM_HTTP_TIMEOUT" | "PM_HTTP_ABORTED";

  constructor(code: HttpClientError["code"], message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Send `req` and read the body up to its cap (beyond it the request is aborted, so the socket is never left
 * with an unread body). Rejects with undici's error, or an HttpClientError: PM_HTTP_TIMEOUT after `timeoutMs`
 * (headers and whole body), PM_HTTP_ABORTED when `signal` fires (or had fired). An abort settles at once, even
 * while the request still waits in undici's queue. `progress.status` is set when the final response's headers
 * arrive (so a failure mid-body still reports its status).
 */
export function sendHttp(
  client: HttpClient,
  req: HttpRequest,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  progress?: HttpProgress,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal?.aborted === true) return reject(callerAbort());
    let target: HttpTarget;
    try {
      target = typeof req.url === "string" ? httpTarget(req.url) : req.url;
    } catch (error) {
      return reject(error instanceof Error ? error : new Error(String(error)));
    }
    const exchange = new Exchange(client, timeoutMs, signal, progress, resolve, reject);
    client.dispatcher.dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: req.method ?? "GET",
        headers: req.headers,
        body: req.body ?? null,
      },
      exchange,
    );
  });
}

/** One request in flight: undici's handler, its deadline and the caller's signal; settles exactly once. */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  /** An abort that came before undici handed over its controller. */
  private pendingAbort: Error | null = null;
  private settled = false;
  private status = 0;
  private retryAfter: string | string[] | undefined = undefined;
  private maxBytes: number;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly timers: Timers;
  private readonly timer: unknown;
  private readonly unwatch: (() => void) | undefined;

  constructor(
    private readonly client: HttpClient,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    private readonly progress: HttpProgress | undefined,
    private readonly resolve: (response: HttpResponse) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.maxBytes = client.maxBodyBytes;
    this.timers = client.timers ?? REAL_TIMERS;
    this.timer = this.timers.setTimer(
      () =>
        this.abortWith(new HttpClientError("PM_HTTP_TIMEOUT", `no complete response within ${timeoutMs} ms`)),
      timeoutMs,
    );
    this.unwatch = signal === undefined ? undefined : watchAbort(signal, () => this.abortWith(callerAbort()));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort !== null) controller.abort(this.pendingAbort);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx informational responses precede the real one
    if (statusCode < 200) return;
    this.status = statusCode;
    if (this.progress !== undefined) this.progress.status = statusCode;
    if (statusCode >= 300) {
      this.maxBytes = this.client.maxErrorBodyBytes;
      this.retryAfter = headers["retry-after"];
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size <= this.maxBytes) {
      this.chunks.push(chunk);
      return;
    }
    const text = this.bodyText();
    this.settle();
    controller.abort(new Error(`response body larger than ${this.maxBytes} bytes`));
    this.resolve({ status: this.status, text, truncated: true, retryAfter: this.retryAfter });
  }

  onResponseEnd(): void {
    if (this.settle())
      this.resolve({
        status: this.status,
        text: this.bodyText(),
        truncated: false,
        retryAfter: this.retryAfter,
      });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settle()) this.reject(error);
  }

  /** Mark the exchange settled (false if it already was) and stop its deadline and its watch. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.timers.clearTimer(this.timer);
    this.unwatch?.();
    return true;
  }

  private abortWith(reason: HttpClientError): void {
    if (!this.settle()) return;
    if (this.controller === null) this.pendingAbort = reason;
    else this.controller.abort(reason);
    this.reject(reason);
  }

  private bodyText(): string {
    const { chunks } = this;
    return chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
  }
}

function callerAbort(): HttpClientError {
  return new HttpClientError("PM_HTTP_ABORTED", "aborted by the caller");
}

/** Callbacks waiting for each caller signal's abort, behind one listener per signal, in the order they came. */
const abortWatchers = new WeakMap<AbortSignal, (() => void)[]>();

/**
 * Call `onAbort` once when `signal` aborts; returns the function that stops watching. A poll stream passes
 * the same signal to many consecutive requests (and a sink its stop signal to every delivery), and an
 * EventTarget listener added and removed per request cost more than the rest of the abort handling, so each
 * signal gets one listener and a list of callbacks. A list rather than a Set: a Set emptied and refilled on
 * every request rebuilt its table each time, and the signal's long life made each new table old garbage.
 */
function watchAbort(signal: AbortSignal, onAbort: () => void): () => void {
  let watchers = abortWatchers.get(signal);
  if (watchers === undefined) {
    const list: (() => void)[] = [];
    watchers = list;
    abortWatchers.set(signal, list);
    signal.addEventListener(
      "abort",
      () => {
        const pending = list.slice();
        list.length = 0;
        for (const callback of pending) callback();
      },
      { once: true },
    );
  }
  const list = watchers;
  list.push(onAbort);
  return () => removeInPlace(list, onAbort);
}

/** Remove `item` from `list` keeping the others' order, without allocating (no splice result). */
function removeInPlace<T>(list: T[], item: T): void {
  const index = list.indexOf(item);
  if (index < 0) return;
  for (let i = index; i < list.length - 1; i++) list[i] = list[i + 1]!;
  list.pop();
}
