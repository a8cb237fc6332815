// Query-string parsing with the server's rejection texts: bad values throw QueryRejection (rendered as plain-text 400).

/** A query string that cannot be deserialised; `detail` follows serde's wording. */
export class QueryRejection extends Error {
  override readonly name = "QueryRejection";
}

/** Parsed query parameters (first value of each name wins). */
export type Params = ReadonlyMap<string, string>;

/** Parse the raw query string (after "?") into a map. */
export function parseParams(search: string): Params {
  const params = new Map<string, string>();
  if (search.length === 0) return params;
  for (const [key, value] of new URLSearchParams(search)) if (!params.has(key)) params.set(key, value);
  return params;
}

/** An enum parameter; absent → `fallback`. */
export function enumParam<T extends string>(
  params: Params,
  name: string,
  values: readonly T[],
  fallback: T,
): T {
  const raw = params.get(name);
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    const expected = values.map((v) => `\`${v}\``);
    const list =
      expected.length > 1
        ? `${expected.slice(0, -1).join(", ")} or ${expected.at(-1) ?? ""}`
        : expected.join("");
    throw new QueryRejection(`${name}: unknown variant \`${raw}\`, expected ${list}`);
  }
  return raw as T;
}

/** A required enum parameter. */
export function requiredEnum<T extends string>(params: Params, name: string, values: readonly T[]): T {
  if (!params.has(name)) throw new QueryRejection(`missing field \`${name}\``);
  return enumParam(params, name, values, values[0] as T);
}

/** A boolean parameter: exactly "true" or "false". */
export function boolParam(params: Params, name: string, fallback: boolean): boolean {
  const raw = params.get(name);
  if (raw === undefined) return fallback;
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw new QueryRejection(`${name}: provided string was not \`true\` or \`false\``);
}

/** An integer parameter (optional). */
export function intParam(params: Params, name: string): number | null {
  const raw = params.get(name);
  if (raw === undefined) return null;
  if (!/^-?\d{1,15}$/.test(raw)) throw new QueryRejection(`${name}: invalid digit found in string`);
  return Number(raw);
}

/** A required string parameter. */
export function requiredString(params: Params, name: string): string {
  const raw = params.get(name);
  if (raw === undefined) throw new QueryRejection(`missing field \`${name}\``);
  return raw;
}

/** `timestamp=START,END` in unix seconds; null when absent. */
export function rangeParam(
  params: Params,
  name: string,
): { readonly startS: number; readonly endS: number } | null {
  const raw = params.get(name);
  if (raw === undefined) return null;
  const match = /^(\d{1,12}),(\d{1,12})$/.exec(raw);
  if (match === null)
    throw new QueryRejection(`${name}: invalid timestamp range \`${raw}\`, expected START,END`);
  return { startS: Number(match[1]), endS: Number(match[2]) };
}
