// Strict, path-reporting reader for one array element of the config (a rule, a sink, a monitor).
import { closest, type ConfigProblem } from "./problems.js";

/** Environment used to resolve `"env:NAME"` secret references. */
export type EnvRecord = Readonly<Record<string, string | undefined>>;

/** One documented element key, recorded when a reader runs in docs mode. */
export interface FieldDoc {
  readonly key: string;
  readonly doc: string;
  readonly default: string;
}

/** Where a reader reports: problems always; env when secrets should be resolved; docs in docs mode. */
export interface ReaderContext {
  readonly problems: ConfigProblem[];
  readonly env?: EnvRecord;
  readonly docs?: FieldDoc[];
}

interface FieldOptions<T> {
  readonly doc: string;
  /** Absent = the key is required. */
  readonly default?: T;
  /** How the default reads in the docs when the value alone would mislead (e.g. "= threshold"). */
  readonly defaultText?: string;
}

const ENV_REF = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;

/** Reads typed fields from a plain object, collecting `path.key: reason` problems and unknown keys. */
export class ElementReader {
  readonly #raw: Readonly<Record<string, unknown>>;
  readonly #known = new Set<string>();
  #abandoned = false;
  readonly isObject: boolean;

  constructor(
    raw: unknown,
    readonly path: string,
    readonly ctx: ReaderContext,
  ) {
    this.isObject = typeof raw === "object" && raw !== null && !Array.isArray(raw);
    this.#raw = this.isObject ? (raw as Record<string, unknown>) : {};
    if (!this.isObject) this.problem("", "must be an object");
  }

  /** Report a problem on `key` of this element ("" = the element itself). */
  problem(key: string, reason: string): void {
    this.ctx.problems.push({ key: key === "" ? this.path : `${this.path}.${key}`, reason });
  }

  /** The raw value of `key`, without marking it read (e.g. to decide on a discriminant). */
  peek(key: string): unknown {
    return this.#raw[key];
  }

  /** Whether the element sets `key` (without marking it read). */
  has(key: string): boolean {
    return Object.hasOwn(this.#raw, key);
  }

  /** A string, optionally matching a pattern; `normalise` rewrites it (e.g. upper-cases a pair). */
  string(
    key: string,
    o: FieldOptions<string> & { pattern?: RegExp; expected?: string; normalise?: (s: string) => string },
  ): string {
    const value = this.#take(key, o, describeString);
    if (typeof value !== "string") return this.#wrong(key, value, o.expected ?? "a string", "");
    if (o.pattern !== undefined && !o.pattern.test(value))
      return this.#wrong(key, value, o.expected ?? "", "");
    return o.normalise === undefined ? value : o.normalise(value);
  }

  /** A string matching `pattern`, or null (the default). */
  nullableString(key: string, o: { doc: string; pattern: RegExp; expected: string }): string | null {
    const value = this.#take<string | null>(key, { ...o, default: null }, () => "null");
    if (value === null) return null;
    if (typeof value !== "string" || !o.pattern.test(value)) return this.#wrong(key, value, o.expected, null);
    return value;
  }

  /** A secret string: a literal, or `"env:NAME"` read from the environment at load. */
  secret(key: string, o: FieldOptions<string> & { check?: (s: string) => string | undefined }): string {
    const value = this.#take(key, o, (d) => (d === "" ? '"" (none)' : describeString(d)));
    if (typeof value !== "string") {
      // Never echo a secret field's value, even a malformed one.
      if (value !== MISSING) this.problem(key, "must be a string or env:NAME");
      return "";
    }
    const ref = ENV_REF.exec(value);
    if (ref?.[1] === undefined) return this.#checked(key, value, o.check);
    if (this.ctx.env === undefined) return value;
    const resolved = this.ctx.env[ref[1]];
    if (resolved === undefined || resolved === "") {
      this.problem(key, `environment variable ${ref[1]} is not set`);
      return "";
    }
    return this.#checked(key, resolved, o.check);
  }

  /** An integer within [min, max]. */
  int(key: string, o: FieldOptions<number> & { min: number; max: number }): number {
    const value = this.#take(key, o, String);
    if (typeof value !== "number" || !Number.isInteger(value) || value < o.min || value > o.max) {
      return this.#wrong(key, value, `an integer from ${o.min} to ${o.max}`, 0);
    }
    return value;
  }

  /** A finite number within (or at) the bounds. */
  number(
    key: string,
    o: FieldOptions<number> & { min: number; max: number; minExclusive?: boolean; unit?: string },
  ): number {
    const value = this.#take(key, o, String);
    const low = o.minExclusive === true ? `> ${o.min}` : `≥ ${o.min}`;
    const unit = o.unit === undefined ? "" : ` (${o.unit})`;
    if (
      typeof value !== "number" ||
      !Number.isFinite(value) ||
      value > o.max ||
      value < o.min ||
      (o.minExclusive === true && value === o.min)
    ) {
      return this.#wrong(key, value, `a number ${low} and ≤ ${o.max}${unit}`, 0);
    }
    return value;
  }

  /** A boolean (JSON true/false only). */
  bool(key: string, o: FieldOptions<boolean>): boolean {
    const value = this.#take(key, o, String);
    return typeof value === "boolean" ? value : this.#wrong(key, value, "true or false", false);
  }

  /** One of a fixed set of strings. */
  oneOf<T extends string>(key: string, values: readonly T[], o: FieldOptions<T>): T {
    const value = this.#take(key, o, describeString);
    if (typeof value === "string" && (values as readonly string[]).includes(value)) return value as T;
    return this.#wrong(key, value, `one of ${values.join(", ")}`, values[0] as T);
  }

  /** A list of strings; `item` checks and normalises each one (return undefined after reporting). */
  stringList(
    key: string,
    o: { doc: string; defaultText?: string; item?: (s: string, itemPath: string) => string | undefined },
  ): readonly string[] {
    const value = this.#take(key, { ...o, default: [] as readonly string[] }, () => "[]");
    if (!Array.isArray(value)) return this.#wrong(key, value, "a list of strings", []);
    const out: string[] = [];
    value.forEach((item: unknown, i) => {
      const itemKey = `${key}[${i}]`;
      if (typeof item !== "string" || item === "") return this.problem(itemKey, "must be a non-empty string");
      const checked = o.item === undefined ? item : o.item(item, `${this.path}.${itemKey}`);
      if (checked !== undefined) out.push(checked);
    });
    return out;
  }

  /** An object of nested elements keyed by name, each read by `item`. */
  record<T>(
    key: string,
    o: { doc: string; item: (reader: ElementReader, name: string) => T; key?: (name: string) => string },
  ): Readonly<Record<string, T>> {
    const value = this.#take(key, { ...o, default: {} }, () => "{}");
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return this.#wrong(key, value, "an object", {});
    }
    const out: Record<string, T> = {};
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
      const nested = new ElementReader(item, `${this.path}.${key}.${name}`, { problems: this.ctx.problems });
      out[o.key === undefined ? name : o.key(name)] = o.item(nested, name);
      nested.finish();
    }
    return out;
  }

  /** A flat object of string values, e.g. labels. */
  stringRecord(key: string, o: { doc: string }): Readonly<Record<string, string>> {
    const value = this.#take(key, { ...o, default: {} }, () => "{}");
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return this.#wrong(key, value, "an object of strings", {});
    }
    const out: Record<string, string> = {};
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
      if (typeof item === "string") out[name] = item;
      else this.problem(`${key}.${name}`, "must be a string");
    }
    return out;
  }

  /** Declare optional keys that are read only when present, so typos of them get a suggestion. */
  allow(...keys: readonly string[]): void {
    for (const key of keys) this.#known.add(key);
  }

  /** Stop judging the element's other keys (e.g. its kind is unknown, so its keys are unknowable). */
  abandon(): void {
    this.#abandoned = true;
  }

  /** Report every key of the element that no reader call asked for. */
  finish(): void {
    if (this.#abandoned) return;
    const known = [...this.#known];
    for (const key of Object.keys(this.#raw)) {
      if (this.#known.has(key)) continue;
      const guess = closest(key, known);
      this.problem(key, guess === undefined ? "unknown key" : `unknown key (did you mean ${guess}?)`);
    }
  }

  #take<T>(key: string, o: FieldOptions<T>, describe: (d: T) => string): unknown {
    this.#known.add(key);
    const shown = o.defaultText ?? (o.default === undefined ? "(required)" : describe(o.default));
    this.ctx.docs?.push({ key, doc: o.doc, default: shown });
    if (Object.hasOwn(this.#raw, key) && this.#raw[key] !== undefined) return this.#raw[key];
    if (o.default !== undefined) return o.default;
    if (this.isObject) this.problem(key, "required");
    return MISSING;
  }

  #wrong<T>(key: string, value: unknown, expected: string, placeholder: T): T {
    if (value !== MISSING) {
      const shown = expected === "" ? "is not valid" : `must be ${expected}`;
      this.problem(key, `${shown}, got ${JSON.stringify(value) ?? typeof value}`);
    }
    return placeholder;
  }

  #checked(key: string, value: string, check?: (s: string) => string | undefined): string {
    const reason = check?.(value);
    if (reason !== undefined) this.problem(key, reason);
    return value;
  }
}

const MISSING = Symbol("missing");

/** Read a config array element by element; `path` is the array's key (elements become `path[i]`). */
export function readElements<T>(
  raw: unknown,
  path: string,
  ctx: ReaderContext,
  read: (reader: ElementReader, index: number) => T,
): T[] {
  if (!Array.isArray(raw)) {
    ctx.problems.push({ key: path, reason: "must be an array (JSON when set from env or a flag)" });
    return [];
  }
  return raw.map((item: unknown, index) => {
    const reader = new ElementReader(item, `${path}[${index}]`, ctx);
    const value = read(reader, index);
    if (reader.isObject) reader.finish();
    return value;
  });
}

/** Report elements whose `identity` repeats an earlier one. */
export function reportDuplicates<T>(
  items: readonly T[],
  path: string,
  ctx: ReaderContext,
  identity: (item: T) => string,
  suffix: string,
  reason: (id: string, firstKey: string) => string = (_id, firstKey) => `duplicate of ${firstKey}`,
): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const id = identity(item);
    const first = seen.get(id);
    if (first === undefined) seen.set(id, index);
    else ctx.problems.push({ key: `${path}[${index}]${suffix}`, reason: reason(id, `${path}[${first}]`) });
  });
}

function describeString(value: string): string {
  return JSON.stringify(value);
}
