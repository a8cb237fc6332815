// The shape of our convict schema: every leaf must carry doc, format, default and env (checked by tsc).
import type { ArrayFormatName } from "./formats.js";

/** Formats a leaf may use: our registered pm-* formats, or an enum list. */
export type LeafFormat =
  | "pm-int"
  | "pm-number"
  | "pm-boolean"
  | "pm-nonempty-string"
  | "pm-string-list"
  | "pm-origin-list"
  | "pm-upstream-url"
  | "pm-optional-url"
  | "pm-candle-interval"
  | "pm-label-set"
  | "*"
  | ArrayFormatName
  | readonly string[];

/** One configuration key. */
export interface SchemaLeaf {
  readonly doc: string;
  readonly format: LeafFormat;
  readonly default: unknown;
  readonly env: string;
  readonly sensitive?: boolean;
  /** Bounds read by the pm-int / pm-number formats. */
  readonly min?: number;
  readonly max?: number;
}

/** A section of keys. */
export interface SchemaSection {
  readonly [key: string]: SchemaNode;
}

export type SchemaNode = SchemaLeaf | SchemaSection;

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

/** An integer key in [min, max]. */
export function intKey(doc: string, env: string, value: number, min: number, max: number): SchemaLeaf {
  return { doc, format: "pm-int", default: value, env, min, max };
}
