// Bearer-token check at WebSocket upgrade: header or `?token=`, compared in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** The token a request presents: `Authorization: Bearer X` first, then `?token=X`; null when none. */
export function presentedToken(request: IncomingMessage, url: URL): string | null {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match?.[1] !== undefined) return match[1];
  }
  return url.searchParams.get("token");
}

/** Build a checker for `expected` ("" = no token required); digests make the comparison length-independent. */
export function createTokenCheck(expected: string): (presented: string | null) => boolean {
  if (expected === "") return () => true;
  const expectedDigest = digest(expected);
  return (presented) => presented !== null && timingSafeEqual(digest(presented), expectedDigest);
}
