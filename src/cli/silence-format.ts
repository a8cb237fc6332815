// What `pragma-monitor silence` prints: the table of `ls` and the line confirming `add` (pure).
import { formatMatchers, silenceState } from "../domain/silence.js";
import { formatDurationMs } from "../sinks/chatops/format.js";
import type { GettableSilence } from "./silence-api.js";
import type { NewSilence } from "./silence-args.js";
import { clean } from "./tail-format.js";

const HEADER = ["ID", "STATE", "MATCHERS", "STARTS", "ENDS", "REMAINING", "CREATED BY", "COMMENT"] as const;
/** A longer comment is cut: the table stays one line per silence (--json has it whole). */
const MAX_COMMENT_CHARS = 60;

/** An ISO time to the second, in UTC: 2026-11-26T10:00:00Z (what --start and --until take back). */
function shortTime(iso: string): string {
  const atMs = Date.parse(iso);
  return Number.isNaN(atMs) ? clean(iso) : new Date(atMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Time left of an active silence, until a pending one starts, or since an expired one ended. */
function remainingText(silence: GettableSilence, nowMs: number): string {
  const state = silence.status.state;
  if (state === "active") return formatDurationMs(Date.parse(silence.endsAt) - nowMs);
  if (state === "pending") return `starts in ${formatDurationMs(Date.parse(silence.startsAt) - nowMs)}`;
  return `ended ${formatDurationMs(nowMs - Date.parse(silence.endsAt))} ago`;
}

/** A comment on one line, cut to MAX_COMMENT_CHARS. */
function commentText(comment: string): string {
  const line = clean(comment.replace(/\s+/g, " ").trim());
  return line.length <= MAX_COMMENT_CHARS ? line : `${line.slice(0, MAX_COMMENT_CHARS - 1)}…`;
}

/** The cells of one silence's row. */
function row(silence: GettableSilence, nowMs: number): readonly string[] {
  return [
    clean(silence.id),
    silence.status.state,
    clean(formatMatchers(silence.matchers)),
    shortTime(silence.startsAt),
    shortTime(silence.endsAt),
    remainingText(silence, nowMs),
    clean(silence.createdBy),
    commentText(silence.comment),
  ];
}

/**
 * The silences as an aligned table with a header, in the order given (the API's: active, pending, expired), or a
 * line saying there are none. The last column is not padded.
 */
export function formatSilenceTable(
  silences: readonly GettableSilence[],
  nowMs: number,
  all: boolean,
): string {
  if (silences.length === 0)
    return all ? "no silences\n" : "no active or pending silences (--all also lists expired ones)\n";
  const rows = [HEADER, ...silences.map((silence) => row(silence, nowMs))];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((cells) => cells[column]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${rows.map(line).join("\n")}\n`;
}

/** The silences `ls` shows: all of them with --all, else the active and pending ones. */
export function listedSilences(
  silences: readonly GettableSilence[],
  all: boolean,
): readonly GettableSilence[] {
  return all ? silences : silences.filter((silence) => silence.status.state !== "expired");
}

/** What `add` says on stderr once the daemon saved the silence (stdout has the id alone, for scripts). */
export function formatAddedLine(id: string, silence: NewSilence, nowMs: number): string {
  const state = silenceState(silence, nowMs) === "pending" ? `from ${shortTime(silence.startsAt)} ` : "";
  const lengthMs = Date.parse(silence.endsAt) - Math.max(nowMs, Date.parse(silence.startsAt));
  return `silence ${clean(id)}: ${formatMatchers(silence.matchers)} ${state}until ${shortTime(silence.endsAt)} (${formatDurationMs(lengthMs)}) by ${silence.createdBy}\n`;
}
