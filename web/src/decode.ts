// Untrusted JSON (WebSocket frames, API answers) checked into the page's types; anything malformed is refused (null).
import type {
  AlertPayload,
  HistoryPoint,
  PriceTick,
  ServerFrame,
  Silence,
  SilenceMatcher,
  StatusView,
  TargetView,
} from "./types.js";

type Json = Readonly<Record<string, unknown>>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === "string";
const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isStringRecord = (value: unknown): value is Readonly<Record<string, string>> =>
  isRecord(value) && Object.values(value).every(isString);
const isRequestId = (value: unknown): value is string | number | null =>
  value === null || isString(value) || isNumber(value);

/** Each element decoded, or null when one of them is not what it should be. */
function listOf<T>(value: unknown, decode: (item: unknown) => T | null): T[] | null {
  if (!Array.isArray(value)) return null;
  const items: T[] = [];
  for (const item of value) {
    const decoded = decode(item);
    if (decoded === null) return null;
    items.push(decoded);
  }
  return items;
}

/** An alert payload (event or `active` entry). */
export function decodeAlert(value: unknown): AlertPayload | null {
  if (!isRecord(value)) return null;
  const ok =
    isString(value["fingerprint"]) &&
    (value["status"] === "firing" || value["status"] === "resolved") &&
    isString(value["rule"]) &&
    (value["severity"] === "info" || value["severity"] === "warning" || value["severity"] === "critical") &&
    isStringRecord(value["labels"]) &&
    isString(value["summary"]) &&
    (value["value"] === null || isNumber(value["value"])) &&
    (value["threshold"] === null || isNumber(value["threshold"])) &&
    isString(value["startsAt"]) &&
    (value["endsAt"] === null || isString(value["endsAt"])) &&
    isRecord(value["context"]) &&
    (value["silencedBy"] === undefined ||
      (Array.isArray(value["silencedBy"]) && value["silencedBy"].every(isString))) &&
    (value["causedBy"] === undefined || isString(value["causedBy"]));
  return ok ? (value as unknown as AlertPayload) : null;
}

/** A price tick. */
export function decodeTick(value: unknown): PriceTick | null {
  if (!isRecord(value)) return null;
  const ok =
    isString(value["pair"]) &&
    isString(value["target"]) &&
    isString(value["price"]) &&
    isString(value["observedAt"]) &&
    isString(value["timestamp"]);
  return ok ? (value as unknown as PriceTick) : null;
}

/** The frames whose shape the page relies on, by type; an unknown type is ignored (null), never fatal. */
function decodeFrameObject(value: Json): ServerFrame | null {
  const type = value["type"];
  switch (type) {
    case "hello":
      return isSeq(value["seq"]) && isNumber(value["protocol"]) ? (value as unknown as ServerFrame) : null;
    case "subscribed": {
      const active = listOf(value["active"], decodeAlert);
      return isSeq(value["seq"]) && active !== null && isRequestId(value["id"])
        ? { type, id: value["id"], seq: value["seq"], active }
        : null;
    }
    case "snapshot": {
      const active = listOf(value["active"], decodeAlert);
      const prices = listOf(value["prices"], decodeTick);
      return isSeq(value["seq"]) && active !== null && prices !== null && isRequestId(value["id"])
        ? { type, id: value["id"], seq: value["seq"], active, prices }
        : null;
    }
    case "pong":
    case "heartbeat":
      return isSeq(value["seq"]) ? (value as unknown as ServerFrame) : null;
    case "gap":
      return isSeq(value["from"]) && isSeq(value["to"])
        ? { type, from: value["from"], to: value["to"] }
        : null;
    case "error":
      return isString(value["code"]) && isString(value["message"]) && isRequestId(value["id"] ?? null)
        ? {
            type,
            id: (value["id"] as string | number | null | undefined) ?? null,
            code: value["code"],
            message: value["message"],
          }
        : null;
    case "alert": {
      const alert = decodeAlert(value["alert"]);
      return isSeq(value["seq"]) && alert !== null ? { type, seq: value["seq"], alert } : null;
    }
    case "lifecycle":
      return isSeq(value["seq"]) && isString(value["event"]) && isString(value["at"])
        ? (value as unknown as ServerFrame)
        : null;
    case "price": {
      const tick = decodeTick(value["tick"]);
      return tick === null ? null : { type, tick };
    }
    default:
      return null;
  }
}

/** One text frame from the server, or null when it is not JSON or not a frame the page knows. */
export function decodeFrame(text: string): ServerFrame | null {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? decodeFrameObject(value) : null;
  } catch {
    return null;
  }
}

function decodeMatcher(value: unknown): SilenceMatcher | null {
  if (!isRecord(value)) return null;
  const ok =
    isString(value["name"]) &&
    isString(value["value"]) &&
    typeof value["isRegex"] === "boolean" &&
    typeof value["isEqual"] === "boolean";
  return ok ? (value as unknown as SilenceMatcher) : null;
}

function decodeSilence(value: unknown): Silence | null {
  if (!isRecord(value)) return null;
  const matchers = listOf(value["matchers"], decodeMatcher);
  const status = value["status"];
  const ok =
    matchers !== null &&
    isString(value["id"]) &&
    isString(value["startsAt"]) &&
    isString(value["endsAt"]) &&
    isString(value["createdBy"]) &&
    isString(value["comment"]) &&
    isRecord(status) &&
    (status["state"] === "active" || status["state"] === "pending" || status["state"] === "expired");
  return ok ? { ...(value as unknown as Silence), matchers } : null;
}

/** The answer of `GET /api/v1/silences` (Alertmanager v2: a bare array). */
export function decodeSilences(value: unknown): Silence[] | null {
  return listOf(value, decodeSilence);
}

function decodeHistoryPoint(value: unknown): HistoryPoint | null {
  return isRecord(value) && isString(value["at"]) && isNumber(value["value"])
    ? { at: value["at"], value: value["value"] }
    : null;
}

function decodeTarget(value: unknown): TargetView | null {
  if (!isRecord(value)) return null;
  const history = listOf(value["history"] ?? [], decodeHistoryPoint);
  const lastPoll = value["lastPoll"];
  const ok =
    history !== null &&
    isString(value["id"]) &&
    isString(value["kind"]) &&
    isStringRecord(value["labels"]) &&
    isNumber(value["periodMs"]) &&
    (lastPoll === null ||
      (isRecord(lastPoll) && isString(lastPoll["at"]) && typeof lastPoll["ok"] === "boolean")) &&
    (value["ageMs"] === null || isNumber(value["ageMs"])) &&
    (value["latest"] === null || (isRecord(value["latest"]) && isString(value["latest"]["kind"])));
  return ok ? { ...(value as unknown as TargetView), history } : null;
}

/** The answer of `GET /api/v1/targets`: `{targets: [...]}`. */
export function decodeTargets(value: unknown): TargetView[] | null {
  return isRecord(value) ? listOf(value["targets"], decodeTarget) : null;
}

/** The answer of `GET /api/v1/status`. */
export function decodeStatus(value: unknown): StatusView | null {
  if (!isRecord(value)) return null;
  const readiness = value["readiness"];
  const sinks = value["sinks"];
  const ok =
    isString(value["version"]) &&
    isRecord(readiness) &&
    typeof readiness["ready"] === "boolean" &&
    Array.isArray(readiness["reasons"]) &&
    Array.isArray(sinks) &&
    sinks.every((sink) => isRecord(sink) && isString(sink["name"]) && typeof sink["failing"] === "boolean");
  return ok ? (value as unknown as StatusView) : null;
}

/** The `message` of an API error body (`{error, message}`), or a fallback naming the status. */
export function apiErrorMessage(value: unknown, status: number): string {
  return isRecord(value) && isString(value["message"]) ? value["message"] : `HTTP ${status}`;
}
