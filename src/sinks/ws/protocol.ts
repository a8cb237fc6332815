// WebSocket protocol v1 (DESIGN §4): client messages described with zod schemas (their types too), with stable error codes.
import { z } from "zod";
import { SEVERITIES } from "../../domain/events.js";
import { normalisePair } from "../../config/checks.js";

/** Protocol version announced in `hello`. */
export const PROTOCOL_VERSION = 1;

export const CHANNELS = ["alerts", "prices", "lifecycle"] as const;
export type Channel = (typeof CHANNELS)[number];

/** Error codes of `{"type":"error"}` frames, all of them sent (docs/websocket.md lists exactly these). */
export const ERROR_CODES = ["bad_request", "unknown_op", "rate_limited"] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The `id` a client attaches to a request, echoed in the reply (`null` when absent or unreadable). */
export type RequestId = string | number | null;

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

const MAX_ID_CHARS = 128;
const ID_MESSAGE = `"id" must be a string of at most ${MAX_ID_CHARS} characters or a number`;
const SINCE_MESSAGE = '"since" must be a non-negative integer seq';

/** `id`: echoed in the reply; absent means null. */
const requestId = z
  .union([z.string().max(MAX_ID_CHARS), z.number()])
  .nullable()
  .default(null);

/** A list of channels, deduplicated; `fallback` when absent. */
const channelList = (fallback: readonly Channel[]) =>
  z
    .array(
      z.enum(CHANNELS, {
        error: (issue) => `unknown channel ${describe(issue.input)} (expected ${CHANNELS.join(", ")})`,
      }),
      { error: '"channels" must be an array of strings' },
    )
    .transform((channels) => [...new Set(channels)])
    .default([...fallback]);

/** Pair or rule names as sent (checked against the known names after parsing). */
const nameList = (field: "pairs" | "rules") =>
  z.array(z.string({ error: `"${field}" must contain strings only` }), {
    error: `"${field}" must be an array of strings`,
  });

/** An object with exactly the fields of `op`: an unknown field is refused, so typos do not pass silently. */
const message = <Shape extends z.core.$ZodLooseShape>(op: Op, shape: Shape) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown field "${truncate(issue.keys[0] ?? "")}" for op ${op}`
        : undefined,
  });

const subscribeSchema = message("subscribe", {
  op: z.literal("subscribe"),
  id: requestId,
  channels: channelList(["alerts"]),
  since: z.int({ error: SINCE_MESSAGE }).min(0, { error: SINCE_MESSAGE }).optional(),
  minSeverity: z
    .enum(SEVERITIES, { error: `"minSeverity" must be one of ${SEVERITIES.join(", ")}` })
    .optional(),
  /** Replace the pair filter when present (`[]` = every pair). */
  pairs: nameList("pairs").optional(),
  /** Replace the rule filter when present (`[]` = every rule). */
  rules: nameList("rules").optional(),
});
const unsubscribeSchema = message("unsubscribe", {
  op: z.literal("unsubscribe"),
  id: requestId,
  channels: channelList([]),
  pairs: nameList("pairs").optional(),
  rules: nameList("rules").optional(),
});

/** One schema per op. */
const MESSAGE_SCHEMAS = {
  subscribe: subscribeSchema,
  unsubscribe: unsubscribeSchema,
  snapshot: message("snapshot", { op: z.literal("snapshot"), id: requestId }),
  ping: message("ping", { op: z.literal("ping"), id: requestId }),
};

export type Op = "subscribe" | "unsubscribe" | "snapshot" | "ping";
export type SubscribeMessage = z.infer<typeof subscribeSchema>;
export type UnsubscribeMessage = z.infer<typeof unsubscribeSchema>;
export type ClientMessage = z.infer<(typeof MESSAGE_SCHEMAS)[Op]>;

const isOp = (value: string): value is Op => Object.hasOwn(MESSAGE_SCHEMAS, value);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Parse one text frame; never throws. */
export function parseClientMessage(text: string, known: KnownNames): ParseResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, op: "invalid", id: null, code: "bad_request", message: "message is not valid JSON" };
  }
  if (!isRecord(raw)) return refused("invalid", null, "message must be a JSON object");
  const id = requestId.safeParse(raw["id"]);
  if (!id.success) return refused("invalid", null, ID_MESSAGE);
  const op = raw["op"];
  if (typeof op !== "string") return refused("invalid", id.data, '"op" must be a string');
  if (!isOp(op)) {
    const message = `unknown op "${truncate(op)}" (expected subscribe, unsubscribe, snapshot or ping)`;
    return { ok: false, op: "unknown", id: id.data, code: "unknown_op", message };
  }
  const parsed = MESSAGE_SCHEMAS[op].safeParse(raw);
  if (!parsed.success) return refused(op, id.data, firstReason(parsed.error));
  return withKnownNames(parsed.data, known);
}

function refused(op: string, id: RequestId, message: string): ParseResult {
  return { ok: false, op, id, code: "bad_request", message };
}

/** The reason a client reads: an unknown field first (as a typo explains the rest), else the first issue. */
function firstReason(error: z.ZodError): string {
  const issue = error.issues.find((i) => i.code === "unrecognized_keys") ?? error.issues[0];
  return issue?.message ?? "invalid message";
}

/** Pairs and rules normalised, deduplicated and checked against what exists (a filter that can never match is refused). */
function withKnownNames(message: ClientMessage, known: KnownNames): ParseResult {
  if (message.op !== "subscribe" && message.op !== "unsubscribe") return { ok: true, message };
  const pairs = knownNames("pair", message.pairs, known.pairs, normalisePair);
  if (typeof pairs === "string") return refused(message.op, message.id, pairs);
  const rules = knownNames("rule", message.rules, known.rules, (rule) => rule);
  if (typeof rules === "string") return refused(message.op, message.id, rules);
  // the schema omits absent keys, so a name list is replaced exactly when the client sent one
  return { ok: true, message: { ...message, ...optional("pairs", pairs), ...optional("rules", rules) } };
}

/** The names, normalised and deduplicated, or the refusal of the first unknown one. */
function knownNames(
  kind: "pair" | "rule",
  names: readonly string[] | undefined,
  known: ReadonlySet<string>,
  normalise: (name: string) => string,
): string[] | undefined | string {
  if (names === undefined) return undefined;
  const unknown = names.find((name) => !known.has(normalise(name)));
  if (unknown !== undefined) return `unknown ${kind} ${describe(unknown)}`;
  return [...new Set(names.map(normalise))];
}

/** The `id` of a message that will not be handled (rate limited), so its error frame can still echo it. */
export function peekRequestId(text: string): RequestId {
  try {
    const raw: unknown = JSON.parse(text);
    return isRecord(raw) ? (requestId.safeParse(raw["id"]).data ?? null) : null;
  } catch {
    return null;
  }
}

/** Spread helper for exactOptionalPropertyTypes: omit the key rather than set it to undefined. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [P in K]?: V });
}

const truncate = (text: string): string => (text.length > 64 ? `${text.slice(0, 64)}…` : text);
const describe = (value: unknown): string =>
  typeof value === "string" ? `"${truncate(value)}"` : truncate(JSON.stringify(value) ?? String(value));
