// Stable alert fingerprints: FNV-1a 64-bit over the rule kind and the sorted labels, as 16 hex chars.
import type { AlertLabels } from "./events.js";

const ENCODER = new TextEncoder();

/** FNV-1a 64-bit of a string's UTF-8 bytes, as 16 lowercase hex chars. */
export function fnv1a64Hex(text: string): string {
  // 64-bit arithmetic in four 16-bit limbs (exact in doubles): prime = 2^40 + 0x1b3, offset 0xcbf29ce484222325.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  const bytes = ENCODER.encode(text);
  for (let i = 0; i < bytes.length; i++) {
    h0 ^= bytes[i] ?? 0;
    const t0 = h0 * 0x1b3;
    let t1 = h1 * 0x1b3;
    let t2 = h2 * 0x1b3 + (h0 << 8);
    const t3 = h3 * 0x1b3 + (h1 << 8);
    t1 += t0 >>> 16;
    h0 = t0 & 0xffff;
    t2 += t1 >>> 16;
    h1 = t1 & 0xffff;
    h3 = (t3 + (t2 >>> 16)) & 0xffff;
    h2 = t2 & 0xffff;
  }
  return hex4(h3) + hex4(h2) + hex4(h1) + hex4(h0);
}

const hex4 = (limb: number): string => limb.toString(16).padStart(4, "0");

/** Fingerprint of an alert: the same rule and labels always give the same 16-hex-char value, whatever the key order. */
export function fingerprintOf(rule: string, labels: AlertLabels): string {
  const keys = Object.keys(labels).sort();
  // Separators are control characters that never occur in label names or values we emit.
  let text = rule;
  for (const key of keys) text += `\u001e${key}\u001f${labels[key] ?? ""}`;
  return fnv1a64Hex(text);
}
