// Stable alert fingerprints: FNV-1a 64-bit over the rule kind and the sorted labels, as 16 hex chars.
import type { AlertLabels } from "./events.js";

const FNV_OFFSET_64 = 0xcbf29ce484222325n;
const FNV_PRIME_64 = 0x100000001b3n;
const ENCODER = new TextEncoder();

/** FNV-1a 64-bit of a string's UTF-8 bytes, as 16 lowercase hex chars. */
export function fnv1a64Hex(text: string): string {
  let hash = FNV_OFFSET_64;
  for (const byte of ENCODER.encode(text)) {
    hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * FNV_PRIME_64);
  }
  return hash.toString(16).padStart(16, "0");
}

/** Fingerprint of an alert: the same rule and labels always give the same 16-hex-char value, whatever the key order. */
export function fingerprintOf(rule: string, labels: AlertLabels): string {
  const keys = Object.keys(labels).sort();
  // Separators are control characters that never occur in label names or values we emit.
  let text = rule;
  for (const key of keys) text += `\u001e${key}\u001f${labels[key] ?? ""}`;
  return fnv1a64Hex(text);
}
