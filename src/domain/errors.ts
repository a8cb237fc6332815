// The project's one error type: every failure carries a stable literal `code` and a `retryable` flag.

/** Stable error codes, matched by value (never by class or message). */
export type PmErrorCode =
  | "PM_ERR_INVALID_REQUEST"
  | "PM_ERR_UPSTREAM_HTTP"
  | "PM_ERR_UPSTREAM_TIMEOUT"
  | "PM_ERR_UPSTREAM_NETWORK"
  | "PM_ERR_UPSTREAM_DECODE"
  /** The SSE price stream refused the request (its error event) or was closed by the server. */
  | "PM_ERR_UPSTREAM_STREAM"
  /** The SSE price stream sent no price of a pair within its stale window. */
  | "PM_ERR_UPSTREAM_STREAM_STALE"
  | "PM_ERR_ABORTED"
  | "PM_ERR_CONFIG"
  | "PM_ERR_STATE"
  /** The state directory is locked by another running pragma-monitor. */
  | "PM_ERR_STATE_LOCKED"
  /** The HTTP/WebSocket port could not be bound (in use, not permitted, no such address). */
  | "PM_ERR_LISTEN"
  | "PM_ERR_SINK"
  /** A cluster member without a valid lease refused to poll (it may no longer own the target). */
  | "PM_ERR_CLUSTER_FENCED";

/** Parsed body of an upstream error response, whichever of the known shapes it had. */
export type UpstreamErrorBody =
  | {
      readonly kind: "entry";
      readonly resource: string;
      readonly message: string;
      readonly happenedAt: string;
    }
  | { readonly kind: "signature"; readonly conversionError: string }
  | { readonly kind: "vault"; readonly message: string }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "empty" };

/** Extra structured facts an error may carry (HTTP status, endpoint, offending field, ...). */
export interface PmErrorDetails {
  readonly endpoint?: string;
  readonly status?: number;
  readonly body?: UpstreamErrorBody;
  readonly field?: string;
  readonly retryAfterMs?: number;
  readonly key?: string;
}

/** Base error of pragma-monitor: a literal code, a retryable flag, optional details and cause. */
export class PmError extends Error {
  override readonly name = "PmError";
  readonly code: PmErrorCode;
  readonly retryable: boolean;
  readonly details: PmErrorDetails;

  constructor(
    code: PmErrorCode,
    message: string,
    options: { retryable?: boolean; details?: PmErrorDetails; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }
}

/** Narrow an unknown thrown value to a PmError, optionally of one code. */
export function isPmError(value: unknown, code?: PmErrorCode): value is PmError {
  return value instanceof PmError && (code === undefined || value.code === code);
}

/** A value or a typed failure: how polls report outcomes without ending their stream. */
export type Result<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: PmError };

/**
 * The string `code` of a thrown value: a Node errno code (`ENOENT`, `ECONNRESET`), an undici code
 * (`UND_ERR_SOCKET`) or a PmError code; undefined when it has none. Codes are safe to log, messages may hold paths.
 */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}
