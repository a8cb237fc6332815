// `pragma-monitor simulate`: parse flags, start the simulator, print its URL, run until SIGINT/SIGTERM.
import { parseArgs } from "node:util";
import { EX_CONFIG, EX_UNAVAILABLE, EX_USAGE } from "../cli/args.js";
import { flagList, synopsis, type FlagSpecs } from "../cli/usage.js";
import { isPmError } from "../domain/errors.js";
import { createSystemClock } from "./clock.js";
import { resolveScenario, type Scenario } from "./scenario.js";
import { startSimulator } from "./server.js";
import { MAX_SYNTHETIC_PAIRS, pairsWithSynthetic } from "./synthetic-pairs.js";

/** Where the command writes (process.stdout/stderr in production, buffers in tests). */
export interface CommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** The flags `simulate` understands; its usage text is generated from them. */
export const SIMULATE_FLAGS = {
  host: { type: "string", value: "H", doc: "address to listen on (default 127.0.0.1)" },
  port: { type: "string", value: "N", doc: "port to listen on (default 0: any free port, printed)" },
  seed: { type: "string", value: "N", doc: "seed of the simulated market (default 1)" },
  scenario: { type: "string", value: "FILE|demo", doc: "fault scenario: a JSON file or the built-in demo" },
  speed: { type: "string", value: "X", doc: "simulated seconds per real second (default 1)" },
  "synthetic-pairs": {
    type: "string",
    value: "N",
    doc: "also serve N synthetic pairs QAAA/USD, QAAB/USD, ... for load tests (default 0)",
  },
  help: { type: "boolean", short: "h", doc: "print this help" },
} as const satisfies FlagSpecs;
const USAGE = `${synopsis("simulate", SIMULATE_FLAGS, "usage: ")}\n${flagList(SIMULATE_FLAGS)}\n`;

/** Run the simulate command; resolves with the exit code once `options.signal` aborts (SIGINT/SIGTERM in main.ts). */
export async function runSimulateCommand(
  argv: readonly string[],
  io: CommandIo,
  options: { readonly signal: AbortSignal },
): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: SIMULATE_FLAGS,
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return EX_USAGE;
  }
  if (values["help"] === true) {
    io.stdout.write(USAGE);
    return 0;
  }
  const port = numberFlag(values["port"], 0, (n) => Number.isInteger(n) && n >= 0 && n <= 65_535);
  const seed = numberFlag(values["seed"], 1, Number.isInteger);
  const speed = numberFlag(values["speed"], 1, (n) => n > 0 && Number.isFinite(n));
  const synthetic = numberFlag(
    values["synthetic-pairs"],
    0,
    (n) => Number.isInteger(n) && n >= 0 && n <= MAX_SYNTHETIC_PAIRS,
  );
  if (port === null || seed === null || speed === null || synthetic === null) {
    io.stderr.write(
      `invalid --port, --seed, --speed or --synthetic-pairs (0..${MAX_SYNTHETIC_PAIRS})\n${USAGE}`,
    );
    return EX_USAGE;
  }
  let scenario: Scenario | undefined;
  const scenarioFlag = values["scenario"];
  if (typeof scenarioFlag === "string") {
    try {
      scenario = resolveScenario(scenarioFlag);
    } catch (error) {
      io.stderr.write(`${isPmError(error) || error instanceof Error ? error.message : String(error)}\n`);
      return EX_CONFIG;
    }
  }
  const host = typeof values["host"] === "string" ? values["host"] : "127.0.0.1";
  let simulator;
  try {
    simulator = await startSimulator({
      host,
      port,
      seed,
      clock: createSystemClock(speed),
      ...(synthetic > 0 ? { pairs: pairsWithSynthetic(synthetic) } : {}),
      ...(scenario === undefined ? {} : { scenario }),
    });
  } catch (error) {
    // a busy port is an operator's situation: one line and a documented code, not a stack trace
    if (!isPmError(error, "PM_ERR_LISTEN")) throw error;
    io.stderr.write(`pragma-monitor simulate: ${error.message}\n`);
    return EX_UNAVAILABLE;
  }
  io.stdout.write(`pragma simulator listening on ${simulator.url} (vault API: ${simulator.vaultUrl})\n`);
  await waitForStop(options.signal);
  await simulator.close();
  io.stdout.write("pragma simulator stopped\n");
  return 0;
}

function numberFlag(
  raw: string | boolean | undefined,
  fallback: number,
  valid: (n: number) => boolean,
): number | null {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  return typeof raw === "string" && raw.trim() !== "" && valid(n) ? n : null;
}

/** Resolve once `signal` aborts (main.ts aborts it on SIGINT/SIGTERM). */
function waitForStop(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
