// The HTTP Retry-After header, shared by the upstream client and the chat-ops sinks.

/**
 * Parse Retry-After (delta seconds, or an HTTP date) into a delay in ms; null when absent or malformed.
 * Fractional seconds are accepted too: some services (Discord) send them.
 */
export function parseRetryAfterMs(header: string | string[] | undefined, nowEpochMs: number): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) {
    const delayMs = Math.ceil(Number(text) * 1000);
    return Number.isSafeInteger(delayMs) ? delayMs : null;
  }
  const dateMs = Date.parse(text);
  if (!Number.isFinite(dateMs)) return null;
  return Math.max(0, dateMs - nowEpochMs);
}
