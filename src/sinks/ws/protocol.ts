// WebSocket protocol v1 (DESIGN §4): validates client messages into a typed union, with stable error codes.
import { SEVERITIES, type Severity } from "../../domain/events.js";

/** Protocol version announced in `hello`. */
export const PROTOCOL_VERSION = 1;

export const CHANNELS = ["alerts", "prices", "lifecycle"] as const;
export type Channel = (typeof CHANNELS)[number];

/** Error codes of `{"type":"error"}` frames, all of them sent (docs/websocket.md lists exactly these). */
export const ERROR_CODES = ["bad_request", "unknown_op", "rate_limited"] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The `id` a client attaches to a request, echoed in the reply (`null` when absent or unreadable). */
export type RequestId = string | number | null;

export interface SubscribeMessage {
  readonly op: "subscribe";
  readonly id: RequestId;
  readonly channels: readonly Channel[];
  /** Replace the pair filter when present (`[]` = every pair). */
  readonly pairs?: readonly string[];
  /** Replace the rule filter when present (`[]` = every rule). */
  readonly rules?: readonly string[];
  readonly minSeverity?: Severity;
  readonly since?: number;
}

export interface UnsubscribeMessage {
  readonly op: "unsubscribe";
  readonly id: RequestId;
  readonly channels: readonly Channel[];
  readonly pairs?: readonly string[];
  readonly rules?: readonly string[];
}

export type ClientMessage =
  | SubscribeMessage
  | UnsubscribeMessage
  | { readonly op: "snapshot"; readonly id: RequestId }
  | { readonly op: "ping"; readonly id: RequestId };

export type Op = ClientMessage["op"];

/** A refused message: what the error frame says. */
export interface ProtocolError {
  readonly id: RequestId;
  readonly code: ErrorCode;
  readonly message: string;
}

export type ParseResult =
  | { readonly ok: true; readonly message: ClientMessage }
  | ({ readonly ok: false; readonly op: string } & ProtocolError);

/** What the server knows exists, to refuse filters that can never match. */
export interface KnownNames {
  readonly pairs: ReadonlySet<string>;
  readonly rules: ReadonlySet<string>;
}

const ALLOWED_KEYS: Readonly<Record<Op, ReadonlySet<string>>> = {
  subscribe: new Set(["op", "id", "channels", "pairs", "rules", "minSeverity", "since"]),
  unsubscribe: new Set(["op", "id", "channels", "pairs", "rules"]),
  snapshot: new Set(["op", "id"]),
  ping: new Set(["op", "id"]),
};
const MAX_ID_CHARS = 128;

/** Thrown inside the validators and turned into a `bad_request` result. */
class BadRequest extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isOp = (value: string): value is Op => Object.hasOwn(ALLOWED_KEYS, value);

/** Parse one text frame; never throws. */
export function parseClientMessage(text: string, known: KnownNames): ParseResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, op: "invalid", id: null, code: "bad_request", message: "message is not valid JSON" };
  }
  if (!isRecord(raw)) {
    return {
      ok: false,
      op: "invalid",
      id: null,
      code: "bad_request",
      message: "message must be a JSON object",
    };
  }
  const id = readId(raw["id"]);
  if (id === undefined) {
    const message = `"id" must be a string of at most ${MAX_ID_CHARS} characters or a number`;
    return { ok: false, op: "invalid", id: null, code: "bad_request", message };
  }
  const op = raw["op"];
  if (typeof op !== "string") {
    return { ok: false, op: "invalid", id, code: "bad_request", message: '"op" must be a string' };
  }
  if (!isOp(op)) {
    const message = `unknown op "${truncate(op)}" (expected subscribe, unsubscribe, snapshot or ping)`;
    return { ok: false, op: "unknown", id, code: "unknown_op", message };
  }
  try {
    for (const key of Object.keys(raw)) {
      if (!ALLOWED_KEYS[op].has(key)) throw new BadRequest(`unknown field "${truncate(key)}" for op ${op}`);
    }
    return { ok: true, message: validate(op, id, raw, known) };
  } catch (error) {
    if (!(error instanceof BadRequest)) throw error;
    return { ok: false, op, id, code: "bad_request", message: error.message };
  }
}

function validate(op: Op, id: RequestId, raw: Record<string, unknown>, known: KnownNames): ClientMessage {
  switch (op) {
    case "snapshot":
    case "ping":
      return { op, id };
    case "subscribe": {
      const channels = readChannels(raw["channels"], ["alerts"]);
      const since = raw["since"];
      if (since !== undefined && !(Number.isSafeInteger(since) && (since as number) >= 0))
        throw new BadRequest('"since" must be a non-negative integer seq');
      const minSeverity = raw["minSeverity"];
      if (minSeverity !== undefined && !SEVERITIES.includes(minSeverity as Severity))
        throw new BadRequest(`"minSeverity" must be one of ${SEVERITIES.join(", ")}`);
      return {
        op,
        id,
        channels,
        ...optional("pairs", readNames("pairs", raw["pairs"], known.pairs, normalisePair)),
        ...optional(
          "rules",
          readNames("rules", raw["rules"], known.rules, (rule) => rule),
        ),
        ...optional("minSeverity", minSeverity as Severity | undefined),
        ...optional("since", since as number | undefined),
      };
    }
    case "unsubscribe":
      return {
        op,
        id,
        channels: readChannels(raw["channels"], []),
        ...optional("pairs", readNames("pairs", raw["pairs"], known.pairs, normalisePair)),
        ...optional(
          "rules",
          readNames("rules", raw["rules"], known.rules, (rule) => rule),
        ),
      };
  }
}

/** Pairs are matched upper-case ("btc/usd" means "BTC/USD"). */
export const normalisePair = (pair: string): string => pair.toUpperCase();

/** The `id` of a message that will not be handled (rate limited), so its error frame can still echo it. */
export function peekRequestId(text: string): RequestId {
  try {
    const raw: unknown = JSON.parse(text);
    return isRecord(raw) ? (readId(raw["id"]) ?? null) : null;
  } catch {
    return null;
  }
}

function readId(value: unknown): RequestId | undefined {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" && value.length <= MAX_ID_CHARS) return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  return undefined;
}

function readChannels(value: unknown, fallback: readonly Channel[]): readonly Channel[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value)) throw new BadRequest('"channels" must be an array of strings');
  const channels = new Set<Channel>();
  for (const item of value as unknown[]) {
    if (typeof item !== "string" || !(CHANNELS as readonly string[]).includes(item))
      throw new BadRequest(`unknown channel ${describe(item)} (expected ${CHANNELS.join(", ")})`);
    channels.add(item as Channel);
  }
  return [...channels];
}

function readNames(
  field: "pairs" | "rules",
  value: unknown,
  known: ReadonlySet<string>,
  normalise: (name: string) => string,
): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new BadRequest(`"${field}" must be an array of strings`);
  const names = new Set<string>();
  for (const item of value as unknown[]) {
    if (typeof item !== "string") throw new BadRequest(`"${field}" must contain strings only`);
    const name = normalise(item);
    if (!known.has(name))
      throw new BadRequest(`unknown ${field === "pairs" ? "pair" : "rule"} ${describe(item)}`);
    names.add(name);
  }
  return [...names];
}

/** Spread helper for exactOptionalPropertyTypes: omit the key rather than set it to undefined. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [P in K]?: V });
}

const truncate = (text: string): string => (text.length > 64 ? `${text.slice(0, 64)}…` : text);
const describe = (value: unknown): string =>
  typeof value === "string" ? `"${truncate(value)}"` : truncate(JSON.stringify(value) ?? String(value));
