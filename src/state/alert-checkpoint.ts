// The alert checkpoint file (`alerts.json`) described with zod: untrusted JSON in, the domain's persisted alert state out.
import type { Logger } from "pino";
import { z } from "zod";
import type { PersistedAlertState } from "../domain/alert-persistence.js";
import { PmError } from "../domain/errors.js";
import { RULE_KINDS } from "../domain/events.js";
import { firstProblem } from "../json-path.js";
import { readJsonFile } from "./atomic-file.js";
import { ALERT_PAYLOAD } from "./event-schema.js";

/** The version `saveCheckpoint` writes and `readCheckpoint` accepts. */
export const CHECKPOINT_VERSION = 1;

/** An instant in ms, or null where the engine holds none (NaN in memory). */
const timeMs = z.number().nullable();
const labels = z.record(z.string(), z.string());

const PERSISTED_ALERT = z
  .object({
    fingerprint: z.string().regex(/^[0-9a-f]{16}$/, { error: "must be 16 hex digits" }),
    ruleId: z.string(),
    rule: z.enum(RULE_KINDS),
    labels,
    // empty for an alert restored from the journal that has not seen fresh data yet (it learns them then)
    targetIds: z.array(z.string()),
    scopeKey: z.string(),
    status: z.enum(["pending", "firing"]),
    rawActive: z.boolean(),
    pendingSinceMs: timeMs,
    startsAtMs: timeMs,
    lastAnnouncedMs: timeMs,
    flipTimesMs: z.array(z.number()),
    flapping: z.boolean(),
    announced: ALERT_PAYLOAD.nullable().default(null),
    // absent in checkpoints written before cause rules: no parent
    causedBy: z.string().nullable().default(null),
  })
  .refine((alert) => alert.status !== "firing" || alert.announced !== null, {
    path: ["announced"],
    error: "a firing alert needs the payload it announced",
  });

/**
 * The engine part of the checkpoint. Typed against the domain's `PersistedAlertState` (the domain may not
 * import zod's schemas from here): the compiler refuses a schema whose output the domain cannot import.
 */
const PERSISTED_ALERT_STATE: z.ZodType<PersistedAlertState> = z
  .object({ version: z.literal(1), alerts: z.array(PERSISTED_ALERT) })
  .superRefine((state, context) => {
    const seen = new Set<string>();
    state.alerts.forEach((alert, index) => {
      if (seen.has(alert.fingerprint))
        context.addIssue({
          code: "custom",
          path: ["alerts", index, "fingerprint"],
          message: "duplicate fingerprint",
        });
      seen.add(alert.fingerprint);
    });
  });

/** The checkpoint file around the engine: its format version and the last journal seq it reflects. */
const CHECKPOINT_FILE = z.object({
  version: z.literal(CHECKPOINT_VERSION),
  lastSeq: z.number(),
  engine: z.unknown(),
});

/** Validate persisted alert state; throws PmError PM_ERR_STATE naming the first bad field (`alert state: alerts[0].status: ...`). */
export function parsePersistedAlertState(value: unknown): PersistedAlertState {
  const parsed = PERSISTED_ALERT_STATE.safeParse(value);
  if (parsed.success) return parsed.data;
  const { path, reason } = firstProblem(parsed.error, "", "(root)");
  throw new PmError("PM_ERR_STATE", `alert state: ${path}: ${reason}`);
}

/** Checkpoint of the alert engine, tagged with the last seq it reflects. */
export interface AlertCheckpoint {
  readonly lastSeq: number;
  readonly engine: PersistedAlertState;
}

/** A checkpoint as read back: `engine` is null when it failed validation (what followed it is still replayed). */
export interface LoadedCheckpoint {
  readonly lastSeq: number;
  readonly engine: PersistedAlertState | null;
}

/** Read the checkpoint; damaged or foreign content is logged and ignored (the journal still restores seq). */
export function readCheckpoint(path: string, nowMs: number, logger: Logger): LoadedCheckpoint | null {
  const read = readJsonFile(path, nowMs);
  switch (read.kind) {
    case "missing":
      return null;
    case "corrupt":
      logger.error(
        { movedTo: read.movedTo, reason: read.reason },
        "alert state file unreadable: moved aside, starting clean",
      );
      return null;
    case "ok": {
      const file = CHECKPOINT_FILE.safeParse(read.value);
      if (!file.success) {
        logger.error({ path }, "alert state file has an unknown format: ignoring it");
        return null;
      }
      return { lastSeq: file.data.lastSeq, engine: engineOf(file.data.engine, logger) };
    }
  }
}

function engineOf(value: unknown, logger: Logger): PersistedAlertState | null {
  try {
    return parsePersistedAlertState(value);
  } catch (error) {
    logger.error({ err: error }, "alert checkpoint invalid: rebuilding alert state from the journal");
    return null;
  }
}

/**
 * The checkpoint as JSON text: the content of `alerts.json`, and of a cluster target's record in KV (there with
 * `writer`, who wrote it, and a handover's price history: extra fields this reader ignores).
 */
export function checkpointJson(
  checkpoint: AlertCheckpoint,
  savedAtMs: number,
  writer: Readonly<Record<string, unknown>> = {},
): string {
  return JSON.stringify({
    version: CHECKPOINT_VERSION,
    savedAt: new Date(savedAtMs).toISOString(),
    ...writer,
    ...checkpoint,
  });
}

/** Parse checkpoint JSON written by `checkpointJson`; throws PmError PM_ERR_STATE naming the first bad field. */
export function parseCheckpointJson(text: string): AlertCheckpoint {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new PmError("PM_ERR_STATE", "alert checkpoint: not JSON");
  }
  const file = CHECKPOINT_FILE.safeParse(value);
  if (!file.success) throw new PmError("PM_ERR_STATE", "alert checkpoint: unknown format");
  return { lastSeq: file.data.lastSeq, engine: parsePersistedAlertState(file.data.engine) };
}
