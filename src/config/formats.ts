// Custom convict formats: strict scalar coercion from env/flags, and element-by-element array validation.
import convict from "convict";
import { INTERVALS, type Interval } from "../domain/types.js";
import { CANDLE_INTERVALS, candleIntervalReason } from "../upstream/server-rules.js";
import { externalLabelNameProblem } from "../domain/external-labels.js";
import { normaliseOrigin } from "./hosts.js";
import { httpUrlProblem } from "./checks.js";
import type { ReaderContext } from "./element-reader.js";
import {
  readFundingMonitors,
  readOffchainMonitors,
  readOnchainMonitors,
  readPublisherMonitors,
  readVaultMonitors,
} from "./monitors-format.js";
import { formatProblems, type ConfigProblem } from "./problems.js";
import { readRules } from "./rules-format.js";
import { readSinks } from "./sinks-format.js";

/** Reads one config array (validates, fills defaults) at a key path. */
export type ArrayReader = (raw: unknown, path: string, ctx: ReaderContext) => readonly unknown[];

/** Array-valued config keys and the reader that validates their elements; also their convict format names. */
export const ARRAY_FORMATS = {
  "pm-offchain-monitors": readOffchainMonitors,
  "pm-onchain-monitors": readOnchainMonitors,
  "pm-publisher-monitors": readPublisherMonitors,
  "pm-funding-monitors": readFundingMonitors,
  "pm-vault-monitors": readVaultMonitors,
  "pm-rules": readRules,
  "pm-sinks": readSinks,
} as const satisfies Record<string, ArrayReader>;

export type ArrayFormatName = keyof typeof ARRAY_FORMATS;

/** Bounds a numeric schema leaf carries for the pm-int / pm-number formats. */
interface Bounds {
  readonly min?: number;
  readonly max?: number;
}

const INT_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_TEXT = new Set(["true", "1", "yes", "on"]);
const FALSE_TEXT = new Set(["false", "0", "no", "off"]);

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
    coerce: (v: string) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        return v;
      }
    },
  },
  "pm-optional-url": {
    validate(x: unknown) {
      assert(typeof x === "string", "must be a string");
      if (x !== "") assert(httpUrlProblem(x) === undefined, 'must be "" or an absolute http(s) URL');
    },
  },
};

function arrayFormat(read: ArrayReader, name: string): convict.Format {
  return {
    name,
    validate(x: unknown) {
      const problems: ConfigProblem[] = [];
      read(x, "", { problems });
      if (problems.length > 0) throw new Error(formatProblems(problems).replaceAll("\n", "; "));
    },
    // Arrays set from an env variable or a flag are JSON; leave unparsable text for validate() to reject.
    coerce: (v: string) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        return v;
      }
    },
  };
}

let registered = false;

/** Register every pm-* format with convict (global registry; idempotent). */
export function registerFormats(): void {
  if (registered) return;
  registered = true;
  const formats: Record<string, convict.Format> = { ...SCALAR_FORMATS };
  for (const [name, read] of Object.entries(ARRAY_FORMATS)) formats[name] = arrayFormat(read, name);
  convict.addFormats(formats);
}
