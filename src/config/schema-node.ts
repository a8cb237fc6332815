// The shape of our convict schema: every leaf carries doc, format, default and env, and the type of its value.

/** Formats a leaf may use: our registered pm-* formats, "*" (any string), or an enum list. */
export type LeafFormat =
  | "pm-int"
  | "pm-number"
  | "pm-boolean"
  | "pm-nonempty-string"
  | "pm-string-list"
  | "pm-origin-list"
  | "pm-group-by"
  | "pm-upstream-url"
  | "pm-optional-url"
  | "pm-candle-interval"
  | "pm-label-set"
  | "pm-json-array"
  | "*"
  | string[];

/** One configuration key whose value (once convict validated it with `format`) is a T. */
export type SchemaLeaf<T = unknown> = {
  readonly doc: string;
  readonly format: LeafFormat;
  readonly default: T;
  readonly env: string;
  readonly sensitive?: boolean;
  /** Bounds read by the pm-int / pm-number formats. */
  readonly min?: number;
  readonly max?: number;
};

/** A section of keys. */
export interface SchemaSection {
  readonly [key: string]: SchemaNode;
}

export type SchemaNode = SchemaLeaf | SchemaSection;

/** The values a schema (or section) holds after convict validated it. */
export type ValuesOf<S> = S extends SchemaLeaf<infer T> ? T : { readonly [K in keyof S]: ValuesOf<S[K]> };

/** Whether a node is a key (has a default) rather than a section. */
export function isLeaf(node: SchemaNode): node is SchemaLeaf {
  return Object.hasOwn(node, "default") && Object.hasOwn(node, "format");
}

/** Every leaf with its dotted key, in schema order. */
export function leaves(section: SchemaSection, prefix = ""): Array<readonly [string, SchemaLeaf]> {
  return Object.entries(section).flatMap(([name, node]) => {
    const key = prefix === "" ? name : `${prefix}.${name}`;
    return isLeaf(node) ? [[key, node] as const] : leaves(node, key);
  });
}

/** A key whose value type is T (its format is what guarantees it). */
export function key<T>(leaf: SchemaLeaf<T>): SchemaLeaf<T> {
  return leaf;
}

/** An integer key in [min, max]. */
export function intKey(
  doc: string,
  env: string,
  value: number,
  min: number,
  max: number,
): SchemaLeaf<number> {
  return { doc, format: "pm-int", default: value, env, min, max };
}

/** An array of elements (JSON from env or a flag), validated element by element with zod after the layers merge. */
export function arrayKey(doc: string, env: string): SchemaLeaf {
  return { doc, format: "pm-json-array", default: [], env };
}
