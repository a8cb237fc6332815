// HTTP transport of the upstream client: GETs over the shared HTTP helper, classified into typed errors and retried per the policy.
import { setTimeout as sleepFor } from "node:timers/promises";
import type { Dispatcher } from "undici";
import { PmError, type PmErrorDetails } from "../domain/errors.js";
import {
  HttpClientError,
  sendHttp,
  type HttpClient,
  type HttpProgress,
  type HttpTarget,
} from "../http-client.js";
import { parseRetryAfterMs } from "../retry-after.js";
import { describeErrorBody, parseUpstreamErrorBody } from "./error-body.js";
import { isTransientHttpFailure, retryDelayMs, type RetryPolicy } from "./retry.js";
import type { CallOptions, EndpointName, RequestObserver, ResponseObserver } from "./types.js";

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
  /** Told of each attempt's raw status and body (the recorder); absent costs nothing. */
  readonly onResponse?: ResponseObserver;
}

/** One GET: where, with which headers, and how to turn the 2xx body text into a value. */
export interface GetRequest<T> {
  readonly endpoint: EndpointName;
  readonly url: string | HttpTarget;
  readonly headers: Readonly<Record<string, string>>;
  readonly decode: (text: string) => T;
}

/** Performs a GET with retries; rejects only with a PmError. */
export type HttpTransport = <T>(req: GetRequest<T>, options?: CallOptions) => Promise<T>;

/** Default sleep: a real timer that rejects when the signal aborts. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepFor(ms, undefined, signal === undefined ? {} : { signal });
}

/**
 * Build the transport: each call retries retryable failures per the policy, never past an abort. The first
 * attempt's promise goes back to the caller as it is; the retry loop (an async function, whose frame is a
 * few hundred bytes per call) starts only after a failure.
 */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const { retry, random, nowMs } = options;
  const client: HttpClient = {
    dispatcher: options.dispatcher,
    maxBodyBytes: options.maxBodyBytes,
    maxErrorBodyBytes: MAX_ERROR_BODY_BYTES,
  };

  /** Attempts after the first failed with `failure`: wait the policy's delay, try again, until success or give-up. */
  async function retryAfter<T>(
    req: GetRequest<T>,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    startMs: number,
    firstFailure: PmError,
  ): Promise<T> {
    let failure = firstFailure;
    for (let attempt = 1; ; attempt++) {
      const delayMs = retryDelayMs(retry, failure, attempt, nowMs() - startMs, random);
      if (delayMs === null) throw failure;
      try {
        await options.sleep(delayMs, signal);
      } catch (error) {
        if (isAborted(signal)) throw abortedError(req.endpoint, signal?.reason);
        throw asPmError(req.endpoint, error);
      }
      if (isAborted(signal)) throw abortedError(req.endpoint, signal?.reason);
      try {
        return await attemptOnce(options, client, req, timeoutMs, signal);
      } catch (error) {
        failure = asPmError(req.endpoint, error);
      }
    }
  }

  return function get<T>(req: GetRequest<T>, call: CallOptions = {}): Promise<T> {
    const { signal } = call;
    const timeoutMs = call.timeoutMs ?? options.timeoutMs;
    if (!(timeoutMs > 0)) {
      return Promise.reject(
        new PmError("PM_ERR_INVALID_REQUEST", `${req.endpoint}: timeoutMs: expected > 0`, {
          details: { endpoint: req.endpoint, field: "timeoutMs" },
        }),
      );
    }
    const startMs = nowMs();
    if (isAborted(signal)) return Promise.reject(abortedError(req.endpoint, signal?.reason));
    return attemptOnce(options, client, req, timeoutMs, signal).catch((error: unknown) =>
      retryAfter(req, signal, timeoutMs, startMs, asPmError(req.endpoint, error)),
    );
  };
}

/** One HTTP attempt: request (on the shared client), classify, decode, observe. */
async function attemptOnce<T>(
  options: HttpTransportOptions,
  client: HttpClient,
  req: GetRequest<T>,
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
): Promise<T> {
  const { endpoint } = req;
  const attemptStartMs = options.nowMs();
  const progress: HttpProgress = { status: null };
  let errorCode: string | null = null;
  let body: string | null = null;
  try {
    const response = await sendHttp(client, req, timeoutMs, callerSignal, progress);
    const { status } = response;
    body = response.text;
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
        : error instanceof HttpClientError && error.code === "PM_HTTP_TIMEOUT"
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
    const durationMs = options.nowMs() - attemptStartMs;
    observe(options.observer, endpoint, durationMs, progress.status, errorCode);
    if (options.onResponse !== undefined)
      tellResponse(options.onResponse, {
        endpoint,
        url: typeof req.url === "string" ? req.url : req.url.origin + req.url.path,
        durationMs,
        status: progress.status,
        errorCode,
        body,
      });
  }
}

/** The PM_ERR_UPSTREAM_HTTP error of a non-2xx response; retryable when isTransientHttpFailure says so. */
export function httpError(
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
export function asPmError(endpoint: EndpointName, error: unknown): PmError {
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

/** Report one attempt's raw outcome; a throwing observer must not break the request. */
function tellResponse(observer: ResponseObserver, sample: Parameters<ResponseObserver>[0]): void {
  try {
    observer(sample);
  } catch {
    // Recording is best effort; the request's outcome stands.
  }
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
