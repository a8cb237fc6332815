// Test helpers: a simulator on port 0 with a manual clock, raw HTTP access, and a tiny OpenAPI schema checker.
import { readFileSync } from "node:fs";
import { Agent, request } from "undici";
import { createManualClock, type ManualClock } from "../../src/simulator/clock.js";
import type { Scenario } from "../../src/simulator/scenario.js";
import { startSimulator, type RunningSimulator, type SimulatorOptions } from "../../src/simulator/server.js";

/** 2026-11-22T10:00:00Z: every test starts its manual clock here. */
export const T0_MS = Date.UTC(2026, 10, 22, 10, 0, 0);

/** A running simulator with its manual clock. */
export interface TestSim {
  readonly sim: RunningSimulator;
  readonly clock: ManualClock;
}

/** Start a simulator on 127.0.0.1:0 with a manual clock at T0 (seed 7 unless given). */
export async function startTestSim(
  options: Omit<SimulatorOptions, "clock"> & { readonly scenario?: Scenario } = {},
): Promise<TestSim> {
  const clock = createManualClock(T0_MS);
  const sim = await startSimulator({ seed: 7, ...options, clock });
  return { sim, clock };
}

/** Short keep-alive pool so closing the simulator never waits on idle sockets. */
export const testAgent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

/** A raw response: status, headers and body text. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** GET (or another method) a path of the simulator and read the whole body as text. */
export async function raw(
  sim: RunningSimulator,
  path: string,
  init: { method?: "GET" | "POST" | "DELETE"; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const response = await request(`${sim.url}${path}`, {
    method: init.method ?? "GET",
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: init.body }),
    dispatcher: testAgent,
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** GET a path expecting JSON; returns status and the parsed body. */
export async function getJson<T = unknown>(
  sim: RunningSimulator,
  path: string,
  headers?: Record<string, string>,
): Promise<{ status: number; body: T; text: string }> {
  const response = await raw(sim, path, headers === undefined ? {} : { headers });
  return { status: response.status, body: JSON.parse(response.text) as T, text: response.text };
}

type Schema = Record<string, unknown>;

const openapi = JSON.parse(readFileSync("/work/shared/spec/pragma-node-openapi.json", "utf8")) as {
  components: { schemas: Record<string, Schema> };
};
const schemas: Record<string, Schema> = { ...openapi.components.schemas };
// The spec (which wins over the OpenAPI file) says OHLC values are decimal-digit strings, not integers.
const ohlc = schemas["OHLCEntry"] as { properties: Record<string, Schema> };
schemas["OHLCEntry"] = {
  ...ohlc,
  properties: {
    ...ohlc.properties,
    open: { type: "string", pattern: "^\\d+$" },
    high: { type: "string", pattern: "^\\d+$" },
    low: { type: "string", pattern: "^\\d+$" },
    close: { type: "string", pattern: "^\\d+$" },
  },
};

function typeOk(type: string, value: unknown): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return typeof value === type;
  }
}

/** Check a value against a JSON-schema subset (type, required, properties, items, enum, oneOf, allOf, $ref, minimum, pattern, additionalProperties, propertyNames). */
export function checkSchema(schema: Schema, value: unknown, path = "$"): string[] {
  const ref = schema["$ref"];
  if (typeof ref === "string") {
    const target = schemas[ref.replace("#/components/schemas/", "")];
    return target === undefined ? [`${path}: unknown $ref ${ref}`] : checkSchema(target, value, path);
  }
  const errors: string[] = [];
  const allOf = schema["allOf"] as Schema[] | undefined;
  if (allOf !== undefined) for (const part of allOf) errors.push(...checkSchema(part, value, path));
  const oneOf = schema["oneOf"] as Schema[] | undefined;
  if (oneOf !== undefined) {
    const matching = oneOf.filter((option) => checkSchema(option, value, path).length === 0).length;
    if (matching !== 1) errors.push(`${path}: matches ${matching} oneOf options`);
  }
  const type = schema["type"] as string | string[] | undefined;
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    if (!types.some((t) => typeOk(t, value)))
      return [...errors, `${path}: expected ${types.join("|")}, got ${JSON.stringify(value)}`];
  }
  const enumValues = schema["enum"] as unknown[] | undefined;
  if (enumValues !== undefined && !enumValues.includes(value))
    errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  const minimum = schema["minimum"] as number | undefined;
  if (minimum !== undefined && typeof value === "number" && value < minimum)
    errors.push(`${path}: below minimum ${minimum}`);
  const pattern = schema["pattern"] as string | undefined;
  if (pattern !== undefined && typeof value === "string" && !new RegExp(pattern).test(value))
    errors.push(`${path}: does not match ${pattern}`);
  if (Array.isArray(value) && schema["items"] !== undefined) {
    value.forEach((item, index) =>
      errors.push(...checkSchema(schema["items"] as Schema, item, `${path}[${index}]`)),
    );
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    for (const key of (schema["required"] as string[] | undefined) ?? [])
      if (!(key in record)) errors.push(`${path}: missing ${key}`);
    const properties = (schema["properties"] as Record<string, Schema> | undefined) ?? {};
    for (const [key, child] of Object.entries(record)) {
      const propertySchema = properties[key] ?? (schema["additionalProperties"] as Schema | undefined);
      if (propertySchema !== undefined && typeof propertySchema === "object")
        errors.push(...checkSchema(propertySchema, child, `${path}.${key}`));
      const names = schema["propertyNames"] as Schema | undefined;
      if (names !== undefined) errors.push(...checkSchema(names, key, `${path}{${key}}`));
    }
  }
  return errors;
}

/** Errors of `value` against a named schema of the OpenAPI file. */
export function validateAgainst(schemaName: string, value: unknown): string[] {
  return checkSchema({ $ref: `#/components/schemas/${schemaName}` }, value);
}
