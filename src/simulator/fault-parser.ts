// Fault JSON (scenario files and the control endpoint) described with zod: the Fault type and its validation.
import { z } from "zod";
import { NETWORKS } from "../domain/types.js";
import { PmError } from "../domain/errors.js";
import { firstProblem } from "../json-path.js";
import type { EndpointKind } from "./faults.js";

const ENDPOINTS = [
  "pair_price",
  "candlestick",
  "funding_rates",
  "onchain",
  "publishers",
  "vault",
  "multi_stream",
] as const satisfies readonly EndpointKind[];
const PAIR_RE = /^[A-Z]+\/[A-Z]+$/;
const NON_EMPTY = "must be a non-empty string";

/** A number that must satisfy `check`, described as `rule` ("a positive number") in the error. */
export const numberField = (rule: string, check: (n: number) => boolean = () => true) =>
  z.number({ error: `must be ${rule}` }).refine(check, { error: `must be ${rule}` });

/** An optional number that must satisfy `check` when present. */
const optionalNumberField = (rule: string, check?: (n: number) => boolean) =>
  numberField(rule, check).exactOptional();

/** Predicates used in validation rules. */
export const positive = (n: number): boolean => n > 0;
export const nonNegative = (n: number): boolean => n >= 0;

const name = z.string({ error: NON_EMPTY }).min(1, { error: NON_EMPTY });
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: (issue) =>
      typeof issue.input === "string" && issue.input !== ""
        ? `must be one of ${values.join(", ")}`
        : NON_EMPTY,
  });
const pair = name.regex(PAIR_RE, { error: 'must be an upper-case pair like "BTC/USD"' });
/** The optional `endpoint`/`pair` filters of transport faults. */
const filters = { endpoint: oneOf(ENDPOINTS).exactOptional(), pair: pair.exactOptional() };
const factor = numberField("a positive number", positive);

/** One schema per fault kind; unknown fields are refused. */
const FAULT_SCHEMA = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ kind: z.literal("spike"), pair, factor }),
    z.strictObject({ kind: z.literal("drift"), pair, factor }),
    z.strictObject({ kind: z.literal("frozenSource"), source: name, pair: pair.exactOptional() }),
    z.strictObject({
      kind: z.literal("frozenPublisher"),
      publisher: name,
      network: oneOf(NETWORKS).exactOptional(),
    }),
    z.strictObject({
      kind: z.literal("dropSources"),
      sources: z
        .array(z.string({ error: "must be a non-empty array of source names" }), {
          error: "must be a non-empty array of source names",
        })
        .min(1, { error: "must be a non-empty array of source names" }),
      pair: pair.exactOptional(),
    }),
    z.strictObject({
      kind: z.literal("outage"),
      status: z.union([z.literal(500), z.literal(503), z.literal(429)], {
        error: "must be one of 500, 503, 429",
      }),
      ...filters,
      retryAfterS: optionalNumberField("a non-negative number", nonNegative),
    }),
    z.strictObject({
      kind: z.literal("latency"),
      latencyMs: numberField("a non-negative number", nonNegative),
      ...filters,
    }),
    z.strictObject({ kind: z.literal("malformed"), ...filters }),
    z.strictObject({ kind: z.literal("truncated"), ...filters }),
    // SSE price stream faults (GET /node/v1/data/multi/stream): checked on every stream tick
    z.strictObject({ kind: z.literal("streamStall"), pair: pair.exactOptional() }),
    z.strictObject({ kind: z.literal("streamDisconnect") }),
    z.strictObject({ kind: z.literal("streamMalformed") }),
    z.strictObject({ kind: z.literal("vaultPaused"), vault: name }),
    z.strictObject({
      kind: z.literal("vaultStatus"),
      vault: name,
      status: oneOf(["live", "paused", "retired"]),
    }),
    z
      .strictObject({
        kind: z.literal("fundingSpike"),
        pair,
        source: name.exactOptional(),
        factor: optionalNumberField("a number"),
        hourlyRate: optionalNumberField("a number"),
      })
      .refine((fault) => fault.factor !== undefined || fault.hourlyRate !== undefined, {
        path: ["factor"],
        error: "factor or hourlyRate is required",
      }),
  ],
  { error: (issue) => kindProblem(issue.input) },
);

/** A simulated fault, as its schema describes it. */
export type Fault = Readonly<z.infer<typeof FAULT_SCHEMA>>;
/** The zod schema of one fault (a scenario entry nests it). */
export const faultSchema: z.ZodType<Fault> = FAULT_SCHEMA;

/** Why a value is no fault at all: not an object, no kind, or a kind nobody knows. */
function kindProblem(input: unknown): string {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return "must be an object";
  const kind = (input as { kind?: unknown }).kind;
  return typeof kind === "string" && kind !== "" ? `unknown fault kind "${kind}"` : NON_EMPTY;
}

/** The PM_ERR_CONFIG error of a scenario or fault, naming the offending field. */
export function scenarioError(path: string, reason: string): PmError {
  return new PmError("PM_ERR_CONFIG", `scenario ${path}: ${reason}`, { details: { field: path } });
}

/** Validate with `schema`; throws PmError PM_ERR_CONFIG naming the first offending field under `path`. */
export function parseScenarioJson<T>(schema: z.ZodType<T>, json: unknown, path: string, root = path): T {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problem = firstProblem(parsed.error, path, root);
  throw scenarioError(problem.path, problem.reason);
}

/** Validate one fault object; errors name the offending field under `path`. */
export function parseFault(json: unknown, path = "fault"): Fault {
  return parseScenarioJson(faultSchema, json, path);
}
