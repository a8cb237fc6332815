// Command-line flags declared once: each command's `parseArgs` options and its usage text come from the same table.

/** One flag: how `parseArgs` reads it (`type`, `short`, `multiple`, `default`) and how usage text shows it. */
export interface FlagSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly multiple?: boolean;
  readonly default?: string | boolean;
  /** The value's placeholder in usage text ("FILE", "N"); string flags only. */
  readonly value?: string;
  /** What the flag does, one line. */
  readonly doc: string;
}

/** A command's flags by long name, in the order usage text lists them. */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

const MAX_LINE = 100;

/** `--name VALUE` (or `--name` for a boolean), with ` ...` when repeatable. */
function flagWithValue(name: string, flag: FlagSpec): string {
  const value = flag.type === "string" ? ` ${flag.value ?? "VALUE"}` : "";
  return `--${name}${value}${flag.multiple === true ? " ..." : ""}`;
}

/** The flags in usage order: as declared, with --help last. */
const ordered = (flags: FlagSpecs): [string, FlagSpec][] =>
  Object.entries(flags).sort(([a], [b]) => Number(a === "help") - Number(b === "help"));

/**
 * `pragma-monitor <command> [--a A] [--b] ...` for every flag but --help, after `lead` (e.g. "usage: "), wrapped
 * at 100 columns with continuation lines aligned under the first flag.
 */
export function synopsis(command: string, flags: FlagSpecs, lead = ""): string {
  const head = `${lead}pragma-monitor ${command}`;
  const indent = " ".repeat(head.length);
  const lines: string[] = [];
  let line = head;
  for (const [name, flag] of ordered(flags)) {
    if (name === "help") continue;
    const item = `[${flagWithValue(name, flag)}]`;
    if (line.length + 1 + item.length > MAX_LINE && line.trim() !== head.trim()) {
      lines.push(line);
      line = indent;
    }
    line = `${line} ${item}`;
  }
  lines.push(line);
  return lines.join("\n");
}

/** Aligned `  -c, --config FILE   what it does` lines, one per flag, for a command's --help. */
export function flagList(flags: FlagSpecs): string {
  const rows = ordered(flags).map(([name, flag]) => {
    const short = flag.short === undefined ? "    " : `-${flag.short}, `;
    const shown =
      flag.default === undefined || flag.default === false ? "" : ` (default ${String(flag.default)})`;
    return [`  ${short}${flagWithValue(name, flag)}`, `${flag.doc}${shown}`] as const;
  });
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return rows.map(([left, doc]) => `${left.padEnd(width)}${doc}`).join("\n");
}
