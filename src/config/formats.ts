// Custom convict formats: strict scalar coercion from env/flags; arrays pass through as JSON for zod.
import convict from "convict";
import { INTERVALS, type Interval } from "../domain/types.js";
import { CANDLE_INTERVALS, candleIntervalReason } from "../upstream/server-rules.js";
import { externalLabelNameProblem } from "../domain/external-labels.js";
import { normaliseOrigin } from "./hosts.js";
import { groupByProblem, httpUrlProblem } from "./checks.js";

/** Bounds a numeric schema leaf carries for the pm-int / pm-number formats. */
interface Bounds {
  readonly min?: number;
  readonly max?: number;
}

const INT_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_TEXT = new Set(["true", "1", "yes", "on"]);
const FALSE_TEXT = new Set(["false", "0", "no", "off"]);

/** JSON text from env or a flag, parsed; text that is not JSON is returned as it is. */
function jsonOrText(v: string): unknown {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function boundsOf(schema: convict.SchemaObj): Bounds {
  const { min, max } = schema as { min?: unknown; max?: unknown };
  return {
    ...(typeof min === "number" ? { min } : {}),
    ...(typeof max === "number" ? { max } : {}),
  };
}

function inBounds(x: number, schema: Bounds): boolean {
  return x >= (schema.min ?? -Infinity) && x <= (schema.max ?? Infinity);
}

function boundsText(schema: Bounds): string {
  return `from ${schema.min ?? "-∞"} to ${schema.max ?? "∞"}`;
}

// convict passes format functions `any` values (untyped JSON); each validator narrows with typeof.
const SCALAR_FORMATS: Record<string, convict.Format> = {
  "pm-int": {
    validate(x: unknown, schema: convict.SchemaObj) {
      const b = boundsOf(schema);
      assert(
        typeof x === "number" && Number.isInteger(x) && inBounds(x, b),
        `must be an integer ${boundsText(b)}`,
      );
    },
    coerce: (v: string) => (INT_TEXT.test(v.trim()) ? Number(v) : v),
  },
  "pm-number": {
    validate(x: unknown, schema: convict.SchemaObj) {
      const b = boundsOf(schema);
      assert(
        typeof x === "number" && Number.isFinite(x) && inBounds(x, b),
        `must be a number ${boundsText(b)}`,
      );
    },
    coerce: (v: string) => (NUMBER_TEXT.test(v.trim()) ? Number(v) : v),
  },
  "pm-boolean": {
    validate(x: unknown) {
      assert(typeof x === "boolean", "must be true or false");
    },
    coerce: (v: string) => {
      const text = v.trim().toLowerCase();
      return TRUE_TEXT.has(text) ? true : FALSE_TEXT.has(text) ? false : v;
    },
  },
  "pm-nonempty-string": {
    validate(x: unknown) {
      assert(typeof x === "string" && x.trim() !== "", "must be a non-empty string");
    },
  },
  "pm-string-list": {
    validate(x: unknown) {
      assert(
        Array.isArray(x) && x.every((s) => typeof s === "string" && s !== ""),
        "must be a list of non-empty strings",
      );
    },
    coerce: (v: string) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== ""),
  },
  "pm-group-by": {
    validate(x: unknown) {
      assert(Array.isArray(x) && x.every((s) => typeof s === "string"), "must be a list of label names");
      const problem = groupByProblem(x);
      assert(problem === undefined, problem ?? "");
    },
    coerce: (v: string) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== ""),
  },
  "pm-origin-list": {
    validate(x: unknown) {
      assert(
        Array.isArray(x) && x.every((s) => typeof s === "string" && normaliseOrigin(s) !== null),
        'must be a list of origins (scheme://host[:port], no path) or "*"',
      );
    },
    coerce: (v: string) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== ""),
  },
  "pm-upstream-url": {
    validate(x: unknown) {
      assert(typeof x === "string", "must be a string");
      if (x !== "simulator")
        assert(httpUrlProblem(x) === undefined, 'must be "simulator" or an absolute http(s) URL');
    },
  },
  "pm-candle-interval": {
    validate(x: unknown) {
      assert(typeof x === "string", `must be one of ${CANDLE_INTERVALS.join(", ")}`);
      const reason = (INTERVALS as readonly string[]).includes(x)
        ? candleIntervalReason(x as Interval)
        : `not an interval`;
      assert(reason === null, `must be one of ${CANDLE_INTERVALS.join(", ")}: ${reason ?? ""}`);
    },
  },
  "pm-label-set": {
    validate(x: unknown) {
      assert(
        typeof x === "object" && x !== null && !Array.isArray(x),
        'must be an object of label name → value, e.g. {"env":"prod"}',
      );
      for (const [name, value] of Object.entries(x)) {
        const problem = externalLabelNameProblem(name);
        assert(problem === undefined, `label ${JSON.stringify(name)} ${problem ?? ""}`);
        assert(
          typeof value === "string" && value !== "",
          `label "${name}" must have a non-empty string value`,
        );
      }
    },
    // From an env variable or a flag: JSON text; unparsable text is left for validate() to reject.
    coerce: jsonOrText,
  },
  "pm-optional-url": {
    validate(x: unknown) {
      assert(typeof x === "string", "must be a string");
      if (x !== "") assert(httpUrlProblem(x) === undefined, 'must be "" or an absolute http(s) URL');
    },
  },
};

/** Array keys: JSON text from env or a flag is parsed here; the elements are validated once, by zod, in load.ts. */
const JSON_ARRAY: convict.Format = {
  validate() {
    // Deliberately empty: convict sees arrays before env secrets resolve; load.ts validates them once.
  },
  // Unparsable text is left for load.ts to reject ("must be an array").
  coerce: jsonOrText,
};

let registered = false;

/** Register every pm-* format with convict (global registry; idempotent). */
export function registerFormats(): void {
  if (registered) return;
  registered = true;
  convict.addFormats({ ...SCALAR_FORMATS, "pm-json-array": JSON_ARRAY });
}
