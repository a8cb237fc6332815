// Zod builders for the keys of config array elements: our `must be …, got …` messages and each key's docs.
import { z } from "zod";
import { didYouMean, unknownKey } from "./problems.js";

/** Environment used to resolve `"env:NAME"` secret references. */
export type EnvRecord = Readonly<Record<string, string | undefined>>;

/** How one element key reads in docs/configuration.md. */
interface FieldDoc {
  readonly doc: string;
  /** The default as the docs show it ("(required)" when the key must be set). */
  readonly default: string;
}

/** Docs of every element key, attached to its schema by the builders below (read by docs.ts). */
export const FIELD_DOCS = z.registry<FieldDoc>();

/** Options every builder takes: the doc line, and how the default reads when its value alone would mislead. */
interface Documented {
  readonly doc: string;
  readonly defaultText?: string;
  /** The key may be absent and has no default (its absence means something, e.g. "the rule's own"). */
  readonly optional?: boolean;
}

type Bounds = { readonly min: number; readonly max: number };

const ENV_REF = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;

/** A value as a problem shows it. */
function shown(value: unknown): string {
  return JSON.stringify(value) ?? typeof value;
}

/** Zod error map: "required" when the key is absent, else `must be <expected>, got <value>`. */
function expecting(expected: string): (issue: { readonly input?: unknown }) => string {
  return (issue) =>
    issue.input === undefined ? "required" : `must be ${expected}, got ${shown(issue.input)}`;
}

/** Attach the docs to a field; `fallback` is the default shown when no defaultText is given. */
function documented<T extends z.ZodType>(schema: T, o: Documented, fallback: string): T {
  FIELD_DOCS.add(schema, { doc: o.doc, default: o.defaultText ?? fallback });
  return schema;
}

/** Apply a default (or leave the key optional, or required) and document it. */
function withDefault<T extends z.ZodType>(
  schema: T,
  o: Documented & { readonly default?: z.core.util.NoUndefined<z.output<T>>; readonly optional?: boolean },
  describe: (value: z.output<T>) => string,
): T | z.ZodDefault<T> | z.ZodExactOptional<T> {
  if (o.optional === true) return documented(schema.exactOptional(), o, "(unset)");
  if (o.default === undefined) return documented(schema, o, "(required)");
  const value = o.default;
  return documented(schema.default(value), o, describe(value));
}

/** An integer within [min, max]. */
export function int(o: Documented & Bounds & { readonly default?: number }) {
  const error = expecting(`an integer from ${o.min} to ${o.max}`);
  const schema = z
    .number({ error })
    .refine((x) => Number.isInteger(x) && x >= o.min && x <= o.max, { error, abort: true });
  return withDefault(schema, o, String);
}

/** A finite number within the bounds; `unit` explains it in the message ("a fraction: 0.02 = 2 %"). */
export function number(
  o: Documented & Bounds & { readonly default?: number; minExclusive?: boolean; unit?: string },
) {
  const low = o.minExclusive === true ? `> ${o.min}` : `≥ ${o.min}`;
  const error = expecting(`a number ${low} and ≤ ${o.max}${o.unit === undefined ? "" : ` (${o.unit})`}`);
  const inRange = (x: number) =>
    Number.isFinite(x) && x <= o.max && (o.minExclusive === true ? x > o.min : x >= o.min);
  return withDefault(z.number({ error }).refine(inRange, { error, abort: true }), o, String);
}

/** A boolean (JSON true/false only). */
export function bool(o: Documented & { readonly default: boolean }) {
  return withDefault(z.boolean({ error: expecting("true or false") }), o, String);
}

/** One of a fixed set of strings. */
export function oneOf<const T extends readonly [string, ...string[]]>(
  values: T,
  o: Documented & { readonly default?: T[number] },
) {
  const expected = expecting(`one of ${values.join(", ")}`);
  const error = (issue: { readonly input?: unknown }) =>
    `${expected(issue)}${didYouMean(issue.input, values)}`;
  const schema = z.enum(values, { error });
  return withDefault(schema, o, shown);
}

/** One of a fixed set of strings, or null (the default: "unset", with a meaning the doc gives). */
export function nullableOneOf<const T extends readonly [string, ...string[]]>(values: T, o: Documented) {
  const expected = expecting(`null or one of ${values.join(", ")}`);
  const error = (issue: { readonly input?: unknown }) =>
    `${expected(issue)}${didYouMean(issue.input, values)}`;
  return documented(z.enum(values, { error }).nullable().default(null), o, "null");
}

/** A string matching `pattern` (`expected` names the shape in messages), optionally normalised. */
export function text(
  o: Documented & {
    readonly pattern: RegExp;
    readonly expected: string;
    readonly default?: string;
    readonly normalise?: (s: string) => string;
  },
) {
  const error = expecting(o.expected);
  const normalise = o.normalise ?? ((s: string) => s);
  const schema = z.string({ error }).regex(o.pattern, { error }).transform(normalise);
  if (o.optional === true) return documented(schema.exactOptional(), o, "(unset)");
  if (o.default === undefined) return documented(schema, o, "(required)");
  return documented(schema.default(o.default), o, shown(o.default));
}

/** A string matching `pattern`, or null (the default). */
export function nullableText(o: Documented & { readonly pattern: RegExp; readonly expected: string }) {
  const error = expecting(o.expected);
  return documented(z.string({ error }).regex(o.pattern, { error }).nullable().default(null), o, "null");
}

/** A list of strings, each checked (and normalised) by `item`; [] by default, or required and non-empty. */
export function list<T extends z.ZodType<string, string>>(
  item: T,
  o: Documented & {
    readonly required?: { readonly emptyReason: string };
    /** Why the whole list is wrong (e.g. a duplicate), or undefined. */
    readonly check?: (items: readonly string[]) => string | undefined;
  },
) {
  const check = o.check ?? (() => undefined);
  const schema = z.array(item, { error: expecting("a list of strings") }).superRefine((items, ctx) => {
    const reason = check(items);
    if (reason !== undefined) ctx.addIssue({ code: "custom", message: reason });
  });
  if (o.required === undefined) return documented(schema.default([]), o, "[]");
  return documented(schema.min(1, { error: o.required.emptyReason }), o, "(required)");
}

/** A non-empty string item of a list; `check` returns why it is wrong, or undefined. */
export function listItem(check: (s: string) => string | undefined = () => undefined) {
  return z.string({ error: "must be a non-empty string" }).superRefine((s, ctx) => {
    const reason = s === "" ? "must be a non-empty string" : check(s);
    if (reason !== undefined) ctx.addIssue({ code: "custom", message: reason });
  });
}

/** An object of nested elements keyed by name (e.g. per-pair overrides); {} by default. */
export function record<T extends z.ZodType>(item: T, o: Documented) {
  return documented(z.record(z.string(), item, { error: expecting("an object") }).default({}), o, "{}");
}

/** A flat object of string values (e.g. labels); {} by default. */
export function stringRecord(o: Documented) {
  const schema = z.record(z.string(), z.string({ error: "must be a string" }), {
    error: expecting("an object of strings"),
  });
  return documented(schema.default({}), o, "{}");
}

/**
 * A secret string: a literal, or `"env:NAME"` read from `env` once, at load. Its value is never echoed in
 * a problem; `check` judges the resolved value.
 */
export function secret(
  env: EnvRecord,
  o: Documented & {
    readonly default?: string;
    readonly check?: (s: string) => string | undefined;
    /** Also accept a JSON integer, as its decimal text (Telegram chat ids). */
    readonly integers?: boolean;
  },
) {
  const expected = o.integers === true ? "an integer, a string or env:NAME" : "a string or env:NAME";
  const error = (issue: { readonly input?: unknown }) =>
    issue.input === undefined ? "required" : `must be ${expected}`;
  const integer = (v: unknown) => (o.integers === true && Number.isSafeInteger(v) ? String(v) : v);
  const schema = z.preprocess(integer, z.string({ error })).transform((value, ctx) => {
    const name = ENV_REF.exec(value)?.[1];
    const resolved = name === undefined ? value : env[name];
    if (resolved === undefined || (name !== undefined && resolved === "")) {
      ctx.addIssue({ code: "custom", message: `environment variable ${name ?? ""} is not set` });
      return z.NEVER;
    }
    const reason = o.check?.(resolved);
    if (reason !== undefined) ctx.addIssue({ code: "custom", message: reason });
    return resolved;
  });
  if (o.default === undefined) return documented(schema, o, "(required)");
  return documented(schema.default(o.default), o, o.default === "" ? '"" (none)' : shown(o.default));
}

/** A strict nested object of documented keys (a sub-section of an element), optional: absent = unset. */
export function optionalElement<T extends z.ZodRawShape>(shape: T, o: Documented) {
  return documented(element(shape).exactOptional(), o, "(unset)");
}

/**
 * A strict element: unknown keys are problems with a "did you mean" suggestion. Zod reports them in one
 * issue per object, so its message carries one `key: reason` line per key (split by elements.ts).
 */
export function element<T extends z.ZodRawShape>(shape: T) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === "unrecognized_keys")
        return issue.keys.map((k) => `${k}: ${unknownKey(k, known)}`).join("\n");
      return issue.code === "invalid_type" ? "must be an object" : undefined;
    },
  });
}
