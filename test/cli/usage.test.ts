// Usage text cannot drift from the parsers: it is generated from their flag tables, and the README's list is checked.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_FLAGS, parseConfigArgs } from "../../src/cli/args.js";
import { COMMANDS, mainUsage, runUsage } from "../../src/cli/main-usage.js";
import { TAIL_FLAGS, parseTailArgs } from "../../src/cli/tail-args.js";
import { runTail } from "../../src/cli/tail.js";
import { flagList, synopsis, type FlagSpecs } from "../../src/cli/usage.js";
import { VERSION } from "../../src/version.js";
import { ROOT } from "../e2e/daemon.js";

/** The `--name` flags a usage text shows. */
const flagsShown = (text: string): string[] => [...text.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!);

/** A value each string flag accepts, to drive the real parsers with what the usage shows. */
const SAMPLE: Readonly<Record<string, string>> = {
  config: "config/default.json",
  set: "server.port=0",
  url: "ws://127.0.0.1:1/ws",
  token: "t",
  pairs: "BTC/USD",
  rules: "price_change",
  "min-severity": "warning",
  since: "3",
};
const argvFor = (flags: FlagSpecs, names: readonly string[]): string[] =>
  names.flatMap((name) =>
    flags[name]?.type === "string" ? [`--${name}`, SAMPLE[name] ?? "x"] : [`--${name}`],
  );

describe("usage text", () => {
  it.each(COMMANDS.map((command) => [command.name, command] as const))(
    "pragma-monitor --help lists every flag of %s",
    (_name, { name, flags }) => {
      const usage = mainUsage(VERSION);
      expect(usage).toContain(synopsis(name, flags, "  "));
      for (const flag of Object.keys(flags).filter((flag) => flag !== "help"))
        expect(synopsis(name, flags)).toContain(`--${flag}`);
    },
  );

  it("shows tail's --rules, --min-severity and --prices (once left out of the top-level help)", () => {
    const tailLines = mainUsage(VERSION).split("pragma-monitor tail")[1]!.split("\n  pragma-monitor ")[0]!;
    expect(flagsShown(tailLines)).toEqual([
      "url",
      "token",
      "pairs",
      "rules",
      "min-severity",
      "since",
      "json",
      "prices",
    ]);
  });

  it("every flag the usage shows is accepted by the real parser", () => {
    const config = flagsShown(synopsis("check-config", CONFIG_FLAGS));
    expect(parseConfigArgs(argvFor(CONFIG_FLAGS, config)).ok).toBe(true);
    const tail = flagsShown(synopsis("tail", TAIL_FLAGS));
    expect(parseTailArgs(argvFor(TAIL_FLAGS, tail), {})).toMatchObject({
      ok: true,
      options: {
        pairs: ["BTC/USD"],
        rules: ["price_change"],
        minSeverity: "warning",
        since: 3,
        prices: true,
      },
    });
  });

  it("describes each flag of a command once, --help last", () => {
    /** The flag each line of a flag list describes (its first `--name`; the doc may quote others). */
    const described = (text: string) => text.split("\n").flatMap((line) => flagsShown(line).slice(0, 1));
    expect(described(flagList(TAIL_FLAGS))).toEqual([...Object.keys(TAIL_FLAGS)]);
    expect(described(runUsage().split("\n").slice(1).join("\n"))).toEqual([
      "config",
      "set",
      "pretty",
      "help",
    ]);
  });

  it("README's Commands block is the generated synopsis of every command", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const block = /## Commands\n\n```\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(`${COMMANDS.map(({ name, flags }) => synopsis(name, flags)).join("\n")}\n`);
  });
});

describe("usage errors exit 64 (EX_USAGE), as the README says", () => {
  it("tail with an unknown flag prints its usage and returns 64", async () => {
    const stderr: string[] = [];
    const code = await runTail(["--bogus"], {
      stdout: { write: () => true },
      stderr: { write: (text: string) => stderr.push(text) },
      env: {},
      isTTY: false,
      signal: new AbortController().signal,
    });
    expect(code).toBe(64);
    expect(stderr.join("")).toContain(synopsis("tail", TAIL_FLAGS, "usage: "));
  });
});
