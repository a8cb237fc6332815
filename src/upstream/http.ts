// HTTP transport of the upstream client: GET with per-attempt timeout, abort, bounded body, typed errors and retries.
import { setTimeout as sleepFor } from "node:timers/promises";
import type { Dispatcher } from "undici";
import { PmError, type PmErrorDetails } from "../domain/errors.js";
import { parseRetryAfterMs } from "../retry-after.js";
import { describeErrorBody, parseUpstreamErrorBody } from "./error-body.js";
import { isTransientHttpFailure, retryDelayMs, type RetryPolicy } from "./retry.js";
import type { CallOptions, EndpointName, RequestObserver } from "./types.js";

/** Error bodies are only read this far: enough for any message, bounded against hostile servers. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Everything the transport needs, injected so tests control time, randomness and the network. */
export interface HttpTransportOptions {
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  /** Largest success body accepted, in bytes. */
  readonly maxBodyBytes: number;
  readonly random: () => number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Monotonic clock for durations and the retry budget. */
  readonly nowMs: () => number;
  /** Wall clock, only to turn a Retry-After HTTP date into a delay. */
  readonly epochMs: () => number;
  readonly observer?: RequestObserver;
}

/** One GET: where, with which headers, and how to turn the 2xx body text into a value. */
export interface GetRequest<T> {
  readonly endpoint: EndpointName;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly decode: (text: string) => T;
}

/** Performs a GET with retries; rejects only with a PmError. */
export type HttpTransport = <T>(req: GetRequest<T>, options?: CallOptions) => Promise<T>;

/** Default sleep: a real timer that rejects when the signal aborts. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepFor(ms, undefined, signal === undefined ? {} : { signal });
}

/** Build the transport: each call retries retryable failures per the policy, never past an abort. */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const { retry, random, nowMs } = options;
  return async function get<T>(req: GetRequest<T>, call: CallOptions = {}): Promise<T> {
    const { signal } = call;
    const timeoutMs = call.timeoutMs ?? options.timeoutMs;
    if (!(timeoutMs > 0)) {
      throw new PmError("PM_ERR_INVALID_REQUEST", `${req.endpoint}: timeoutMs: expected > 0`, {
        details: { endpoint: req.endpoint, field: "timeoutMs" },
      });
    }
    const startMs = nowMs();
    for (let attempt = 1; ; attempt++) {
      if (isAborted(signal)) throw abortedError(req.endpoint, signal?.reason);
      let failure: PmError;
      try {
        return await attemptOnce(options, req, timeoutMs, signal);
      } catch (error) {
        failure = asPmError(req.endpoint, error);
      }
      const delayMs = retryDelayMs(retry, failure, attempt, nowMs() - startMs, random);
      if (delayMs === null) throw failure;
      try {
        await options.sleep(delayMs, signal);
      } catch (error) {
        if (isAborted(signal)) throw abortedError(req.endpoint, signal?.reason);
        throw asPmError(req.endpoint, error);
      }
    }
  };
}

/**
 * One HTTP attempt: request, read the body (always consumed or aborted), classify, decode, observe.
 *
 * Runs on undici's `dispatch()` handler API rather than `request()`: no Readable body stream, no async
 * iterator, no per-attempt AbortController and no AsyncResource, which were a large share of the CPU of a
 * daemon polling 500 targets every second. The deadline and the caller's signal abort the request through
 * undici's own dispatch controller.
 */
async function attemptOnce<T>(
  options: HttpTransportOptions,
  req: GetRequest<T>,
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
): Promise<T> {
  const { endpoint } = req;
  const attemptStartMs = options.nowMs();
  const progress: AttemptProgress = { status: null };
  let errorCode: string | null = null;
  try {
    const response = await dispatchGet(options, req, timeoutMs, callerSignal, progress);
    const { status } = response;
    if (status >= 200 && status < 300) {
      if (response.truncated) {
        throw new PmError(
          "PM_ERR_UPSTREAM_DECODE",
          `${endpoint}: body: larger than ${options.maxBodyBytes} bytes`,
          {
            details: { endpoint, field: "body", status },
          },
        );
      }
      return req.decode(response.text);
    }
    throw httpError(endpoint, status, response.text, response.retryAfter, options.epochMs());
  } catch (error) {
    const failure =
      callerSignal?.aborted === true
        ? abortedError(endpoint, callerSignal.reason)
        : error instanceof PmError
          ? error
          : error instanceof AttemptTimeout
            ? new PmError(
                "PM_ERR_UPSTREAM_TIMEOUT",
                `${endpoint}: no complete response within ${timeoutMs} ms`,
                {
                  retryable: true,
                  details: { endpoint },
                  cause: error,
                },
              )
            : asPmError(endpoint, error);
    errorCode = failure.code;
    throw failure;
  } finally {
    observe(options.observer, endpoint, options.nowMs() - attemptStartMs, progress.status, errorCode);
  }
}

/** What an attempt got before it settled: the final status, once its headers came. */
interface AttemptProgress {
  status: number | null;
}

/** A response read (up to its cap) by dispatchGet. */
interface RawResponse {
  readonly status: number;
  readonly text: string;
  /** The body was larger than its cap: `text` holds what came before the chunk that crossed it. */
  readonly truncated: boolean;
  readonly retryAfter: string | string[] | undefined;
}

/** Why an attempt was aborted by its own deadline (classified as PM_ERR_UPSTREAM_TIMEOUT). */
class AttemptTimeout extends Error {
  override readonly name = "AttemptTimeout";
}

/** Why an attempt was aborted by the caller's signal (classified as PM_ERR_ABORTED). */
class CallerAbort extends Error {
  override readonly name = "CallerAbort";
}

/**
 * GET `req.url` and read the body up to its cap (`maxBodyBytes` for a 2xx, MAX_ERROR_BODY_BYTES otherwise;
 * beyond it the request is aborted, so the socket is never left with an unread body). Rejects with undici's
 * error, an AttemptTimeout after `timeoutMs` (headers and whole body) or a CallerAbort when the caller's
 * signal fires; an abort settles at once, even while the request still waits in undici's queue, and aborts
 * the request as soon as undici hands over its controller. `progress.status` is set when the final
 * response's headers arrive (so a failure mid-body still reports its status).
 */
function dispatchGet(
  options: HttpTransportOptions,
  req: GetRequest<unknown>,
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
  progress: AttemptProgress,
): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    let pendingAbort: Error | null = null;
    let settled = false;
    let status = 0;
    let retryAfter: string | string[] | undefined;
    let maxBytes = options.maxBodyBytes;
    const chunks: Buffer[] = [];
    let size = 0;

    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      unwatch?.();
      return true;
    };
    const abortWith = (reason: Error): void => {
      if (!settle()) return;
      if (controller === null) pendingAbort = reason;
      else controller.abort(reason);
      reject(reason);
    };
    const bodyText = (): string =>
      chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
    const onCallerAbort = (): void => abortWith(new CallerAbort("aborted by the caller"));
    const timer = setTimeout(
      () => abortWith(new AttemptTimeout(`no complete response within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const unwatch = callerSignal === undefined ? undefined : watchAbort(callerSignal, onCallerAbort);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(dispatchController) {
        controller = dispatchController;
        if (pendingAbort !== null) dispatchController.abort(pendingAbort);
      },
      onResponseStart(_controller, statusCode, headers) {
        // 1xx informational responses precede the real one
        if (statusCode < 200) return;
        status = statusCode;
        progress.status = statusCode;
        if (statusCode >= 300) {
          maxBytes = MAX_ERROR_BODY_BYTES;
          retryAfter = headers["retry-after"];
        }
      },
      onResponseData(dispatchController, chunk) {
        if (settled) return;
        size += chunk.length;
        if (size <= maxBytes) {
          chunks.push(chunk);
          return;
        }
        const text = bodyText();
        settle();
        dispatchController.abort(new Error(`response body larger than ${maxBytes} bytes`));
        resolve({ status, text, truncated: true, retryAfter });
      },
      onResponseEnd() {
        if (settle()) resolve({ status, text: bodyText(), truncated: false, retryAfter });
      },
      onResponseError(_controller, error) {
        if (settle()) reject(error);
      },
    };

    let url: URL;
    try {
      url = new URL(req.url);
    } catch (error) {
      if (settle()) reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    options.dispatcher.dispatch(
      { origin: url.origin, path: url.pathname + url.search, method: "GET", headers: req.headers },
      handler,
    );
  });
}

/** Callbacks waiting for each caller signal's abort, behind one listener per signal. */
const abortWatchers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Call `onAbort` once when `signal` aborts; returns the function that stops watching. A poll stream passes
 * the same signal to many consecutive requests, and an EventTarget listener added and removed per attempt
 * cost more than the rest of the abort handling, so each signal gets one listener and a Set of callbacks.
 */
function watchAbort(signal: AbortSignal, onAbort: () => void): () => void {
  let watchers = abortWatchers.get(signal);
  if (watchers === undefined) {
    const set = new Set<() => void>();
    watchers = set;
    abortWatchers.set(signal, set);
    signal.addEventListener(
      "abort",
      () => {
        const pending = [...set];
        set.clear();
        for (const callback of pending) callback();
      },
      { once: true },
    );
  }
  const set = watchers;
  set.add(onAbort);
  return () => {
    set.delete(onAbort);
  };
}

/** The PM_ERR_UPSTREAM_HTTP error of a non-2xx response; retryable when isTransientHttpFailure says so. */
function httpError(
  endpoint: EndpointName,
  status: number,
  text: string,
  retryAfterHeader: string | string[] | undefined,
  epochMs: number,
): PmError {
  const body = parseUpstreamErrorBody(text);
  const retryAfterMs = parseRetryAfterMs(retryAfterHeader, epochMs);
  const details: PmErrorDetails =
    retryAfterMs === null ? { endpoint, status, body } : { endpoint, status, body, retryAfterMs };
  return new PmError("PM_ERR_UPSTREAM_HTTP", `${endpoint}: HTTP ${status}: ${describeErrorBody(body)}`, {
    retryable: isTransientHttpFailure(status, body),
    details,
  });
}

/** Whether the caller's signal has fired (a function, so TypeScript re-reads it after each await). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** PM_ERR_ABORTED: the caller gave up; never retried. */
function abortedError(endpoint: EndpointName, reason: unknown): PmError {
  return new PmError("PM_ERR_ABORTED", `${endpoint}: aborted`, { details: { endpoint }, cause: reason });
}

/** Any other failure: a PmError passes through, the rest is a (retryable) network error. */
function asPmError(endpoint: EndpointName, error: unknown): PmError {
  if (error instanceof PmError) return error;
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  const message = error instanceof Error ? error.message : String(error);
  // undici's argument errors are our bugs, not the network's: retrying cannot help.
  const retryable = code !== "UND_ERR_INVALID_ARG";
  return new PmError(
    "PM_ERR_UPSTREAM_NETWORK",
    `${endpoint}: ${code.length > 0 ? `${code}: ` : ""}${message}`,
    {
      retryable,
      details: { endpoint },
      cause: error,
    },
  );
}

/** Report one attempt to the observer; a throwing observer must not break the request. */
function observe(
  observer: RequestObserver | undefined,
  endpoint: EndpointName,
  durationMs: number,
  status: number | null,
  errorCode: string | null,
): void {
  if (observer === undefined) return;
  try {
    observer({ endpoint, durationMs, status, errorCode });
  } catch {
    // Metrics are best effort; the request's outcome stands.
  }
}
