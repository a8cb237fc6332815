// One HTTP delivery attempt over the shared HTTP helper and dispatcher, classified for the retry policy.
import type { Dispatcher } from "undici";
import { errorCode } from "../../domain/errors.js";
import { HttpClientError, sendHttp, type Timers } from "../../http-client.js";
import { parseRetryAfterMs } from "../../retry-after.js";
import { USER_AGENT } from "../../version.js";
import type { RenderedRequest } from "./types.js";

/**
 * Result of one attempt. `retry` may carry the server's `Retry-After`; `rejected` is a 4xx about the message
 * itself (dead-lettered); `misconfigured` is a 4xx about us (wrong secret, revoked or mistyped URL): the
 * messages are fine and are kept until the operator fixes the sink or `maxAgeMs` passes.
 */
export type DeliveryOutcome =
  | { readonly kind: "ok"; readonly status: number }
  | {
      readonly kind: "retry";
      readonly outcome: "http_error" | "rate_limited" | "timeout" | "network";
      readonly status?: number;
      readonly code?: string;
      readonly retryAfterMs?: number;
    }
  | { readonly kind: "rejected"; readonly status: number }
  | { readonly kind: "misconfigured"; readonly status: number }
  | { readonly kind: "aborted" };

/** An attempt that reached a verdict (not cut short by a stop). */
export type FinishedOutcome = Exclude<DeliveryOutcome, { readonly kind: "aborted" }>;

/** The `outcome` label of `pragma_monitor_sink_deliveries_total` for a finished attempt. */
export function outcomeLabel(outcome: FinishedOutcome): string {
  return outcome.kind === "retry" ? outcome.outcome : outcome.kind;
}

/** Statuses that mean "fix the sink's configuration", not "this message is bad". */
const MISCONFIGURED_STATUSES: ReadonlySet<number> = new Set([401, 403, 404, 410]);

/** Longest `Retry-After` we honour; anything longer is clamped (the max-age policy still applies). */
export const MAX_RETRY_AFTER_MS = 3_600_000;
/** Bodies are read this far: a success's is not needed, an error's only for Discord's or Telegram's retry_after. */
const MAX_BODY_BYTES = 16 * 1024;

/**
 * Send `rendered` to `url` (POST unless `method` says otherwise) with our User-Agent, aborting after
 * `timeoutMs` or when `stopSignal` fires. Never throws; never names the URL (it may hold a secret).
 */
export async function deliver(options: {
  readonly dispatcher: Dispatcher;
  readonly url: string;
  readonly method?: "GET" | "HEAD" | "POST";
  readonly rendered: RenderedRequest;
  readonly timeoutMs: number;
  readonly timers: Timers;
  readonly nowMs: () => number;
  readonly stopSignal: AbortSignal;
}): Promise<DeliveryOutcome> {
  const { stopSignal } = options;
  if (stopSignal.aborted) return { kind: "aborted" };
  const method = options.method ?? "POST";
  const client = {
    dispatcher: options.dispatcher,
    maxBodyBytes: MAX_BODY_BYTES,
    maxErrorBodyBytes: MAX_BODY_BYTES,
    timers: options.timers,
  };
  const request = {
    url: options.url,
    method,
    headers: { "user-agent": USER_AGENT, ...options.rendered.headers },
    ...(method === "POST" ? { body: options.rendered.body } : {}),
  };
  try {
    const res = await sendHttp(client, request, options.timeoutMs, stopSignal);
    return classify(res.status, res.retryAfter, res.text, options.nowMs());
  } catch (err) {
    if (err instanceof HttpClientError && err.code === "PM_HTTP_TIMEOUT")
      return { kind: "retry", outcome: "timeout", code: "PM_ERR_SINK_TIMEOUT" };
    if (stopSignal.aborted) return { kind: "aborted" };
    return { kind: "retry", outcome: "network", code: errorCode(err) ?? "UNKNOWN" };
  }
}

/** The verdict on a response: delivered, retry (with the receiver's Retry-After), misconfigured or rejected. */
function classify(
  status: number,
  retryAfter: string | string[] | undefined,
  bodyText: string,
  nowMs: number,
): FinishedOutcome {
  if (status >= 200 && status < 300) return { kind: "ok", status };
  if (status === 429 || status === 503) {
    const retryAfterMs = retryAfterFrom(retryAfter, bodyText, nowMs);
    return {
      kind: "retry",
      outcome: status === 429 ? "rate_limited" : "http_error",
      status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  if (status === 408 || status === 425 || status >= 500)
    return { kind: "retry", outcome: "http_error", status };
  if (MISCONFIGURED_STATUSES.has(status)) return { kind: "misconfigured", status };
  return { kind: "rejected", status };
}

/** Parse `Retry-After` (delta-seconds or HTTP-date), falling back to Discord/Telegram JSON `retry_after` seconds. */
export function retryAfterFrom(
  header: string | string[] | undefined,
  bodyText: string,
  nowMs: number,
): number | undefined {
  const fromHeader = parseRetryAfterMs(header, nowMs);
  if (fromHeader !== null) return clampRetryAfter(fromHeader);
  try {
    const parsed = JSON.parse(bodyText) as { retry_after?: unknown; parameters?: { retry_after?: unknown } };
    const seconds = parsed.retry_after ?? parsed.parameters?.retry_after;
    if (typeof seconds === "number" && Number.isFinite(seconds)) return clampRetryAfter(seconds * 1000);
  } catch {
    // Not JSON: no hint in the body.
  }
  return undefined;
}

function clampRetryAfter(delayMs: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.ceil(delayMs)));
}

/** Host of a sink URL for logs (the path and query may hold secrets). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "invalid-url";
  }
}
