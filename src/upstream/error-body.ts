// Reading upstream error responses: the known error body shapes and the Retry-After header.
import type { UpstreamErrorBody } from "../domain/errors.js";

/** Longest plain-text error body kept in an error's details (the rest is dropped). */
const MAX_TEXT_CHARS = 1_000;

/** Classify an error response body: entry JSON, signature JSON, vault envelope, plain text or empty. */
export function parseUpstreamErrorBody(text: string): UpstreamErrorBody {
  const trimmed = text.trim();
  if (trimmed.length === 0) return { kind: "empty" };
  if (trimmed.startsWith("{")) {
    const parsed = tryParse(trimmed);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      const known = classifyJson(parsed as Readonly<Record<string, unknown>>);
      if (known !== null) return known;
    }
  }
  return {
    kind: "text",
    text: trimmed.length > MAX_TEXT_CHARS ? `${trimmed.slice(0, MAX_TEXT_CHARS)}…` : trimmed,
  };
}

/** The known JSON error shapes, or null for any other JSON (kept as text). */
function classifyJson(o: Readonly<Record<string, unknown>>): UpstreamErrorBody | null {
  const { resource, message, happened_at: happenedAt } = o;
  if (typeof message === "string" && (typeof resource === "string" || typeof happenedAt === "string")) {
    return {
      kind: "entry",
      resource: typeof resource === "string" ? resource : "",
      message,
      happenedAt: typeof happenedAt === "string" ? happenedAt : "",
    };
  }
  const signature = o["InvalidSignature"];
  if (typeof signature === "object" && signature !== null) {
    const conversionError = (signature as Readonly<Record<string, unknown>>)["ConversionError"];
    return {
      kind: "signature",
      conversionError: typeof conversionError === "string" ? conversionError : JSON.stringify(signature),
    };
  }
  if (o["status"] === "error" && typeof o["msg"] === "string") return { kind: "vault", message: o["msg"] };
  return null;
}

/** JSON.parse that returns undefined instead of throwing. */
function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** One-line human summary of an error body for error messages. */
export function describeErrorBody(body: UpstreamErrorBody): string {
  switch (body.kind) {
    case "entry":
      return body.message;
    case "signature":
      return `InvalidSignature: ${body.conversionError}`;
    case "vault":
      return body.message;
    case "text":
      return body.text.length > 200 ? `${body.text.slice(0, 200)}…` : body.text;
    case "empty":
      return "empty body";
  }
}
