// Compact text of a target's recent price points, carried in a cluster handover record (encode, and validate on decode).
import { PmError } from "./errors.js";
import { ScaledPrice } from "./price.js";
import type { PricePoint } from "./price-history.js";

/**
 * Most characters one target's encoded points may take. A full history (1024 points of a 1e12-scale price) takes
 * about 18 KiB; more is thinned on encode and refused on decode, so a handover record stays far below NATS's
 * 1 MiB message limit with several targets under one ownership key.
 */
export const MAX_ENCODED_POINTS_CHARS = 32 * 1024;

const FORMAT = "1";
/** Decimals a point may declare: the scales the price math has a fast table for. */
const MAX_DECIMALS = 63;
const RAW = /^[1-9][0-9]{0,77}$/;
const INTEGER = /^(0|[1-9][0-9]{0,15})$/;

/**
 * `1;<decimals>;<first atMs>;<dtMs>:<raw>[:<decimals>],…`: times as steps from the previous point (the first
 * from the start: 0), prices as raw integers at the shared scale (a point at another scale names its own).
 * Oldest first. Over MAX_ENCODED_POINTS_CHARS, every other point but the newest is dropped until it fits
 * (the history's own way to cover a longer span with fewer points); empty text for no points.
 */
export function encodePricePoints(points: readonly PricePoint[]): string {
  let kept = points;
  for (;;) {
    const text = encodeAll(kept);
    if (text.length <= MAX_ENCODED_POINTS_CHARS) return text;
    const last = kept.length - 1;
    kept = kept.filter((_, i) => (last - i) % 2 === 0);
  }
}

function encodeAll(points: readonly PricePoint[]): string {
  const first = points[0];
  if (first === undefined) return "";
  const decimals = first.price.decimals;
  const entries: string[] = [];
  let previousMs = first.atMs;
  for (const { atMs, price } of points) {
    const scale = price.decimals === decimals ? "" : `:${price.decimals}`;
    entries.push(`${atMs - previousMs}:${price.raw}${scale}`);
    previousMs = atMs;
  }
  return `${FORMAT};${decimals};${first.atMs};${entries.join(",")}`;
}

/**
 * The points of `encodePricePoints` text, oldest first, strictly increasing in time. Throws PmError PM_ERR_STATE
 * saying what is wrong (`price points: …`) for text over the size limit or not in the format: whole-ms times,
 * positive raw prices, known scales.
 */
export function decodePricePoints(text: string): PricePoint[] {
  if (text.length > MAX_ENCODED_POINTS_CHARS)
    throw invalid(`${text.length} characters, over the limit of ${MAX_ENCODED_POINTS_CHARS}`);
  if (text === "") return [];
  const [format, decimalsText, startText, body, ...rest] = text.split(";");
  if (format !== FORMAT) throw invalid(`unknown format ${JSON.stringify(format)}`);
  if (rest.length > 0 || body === undefined || body === "") throw invalid("not 4 fields");
  const decimals = decimalsOf(decimalsText);
  let atMs = integerOf(startText, "start");
  const points: PricePoint[] = [];
  for (const entry of body.split(",")) {
    const [stepText, rawText, scaleText, ...extra] = entry.split(":");
    if (extra.length > 0 || rawText === undefined || !RAW.test(rawText))
      throw invalid(`point ${points.length}: not <dtMs>:<raw>[:<decimals>]`);
    const stepMs = integerOf(stepText, `point ${points.length}'s step`);
    if (points.length > 0 && stepMs === 0) throw invalid(`point ${points.length}: same time as the previous`);
    atMs += stepMs;
    if (!Number.isSafeInteger(atMs)) throw invalid(`point ${points.length}: time out of range`);
    const scale = scaleText === undefined ? decimals : decimalsOf(scaleText);
    points.push({ atMs, price: new ScaledPrice(BigInt(rawText), scale) });
  }
  return points;
}

function decimalsOf(text: string | undefined): number {
  const decimals = integerOf(text, "decimals");
  if (decimals > MAX_DECIMALS) throw invalid(`decimals ${decimals} over ${MAX_DECIMALS}`);
  return decimals;
}

function integerOf(text: string | undefined, what: string): number {
  if (text === undefined || !INTEGER.test(text)) throw invalid(`${what} is not a whole number`);
  return Number(text);
}

function invalid(reason: string): PmError {
  return new PmError("PM_ERR_STATE", `price points: ${reason}`);
}
