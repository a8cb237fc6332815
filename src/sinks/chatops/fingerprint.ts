// Stable 64-bit FNV-1a fingerprint of a rule and its labels (no domain helper exists yet).

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/** FNV-1a 64-bit hash of a string's UTF-16 code units, as 16 hex digits. */
export function fnv1a64Hex(text: string): string {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * FNV_PRIME) & MASK_64;
  }
  return hash.toString(16).padStart(16, "0");
}

/** Fingerprint of `rule` + labels, independent of label insertion order. */
export function fingerprintOf(rule: string, labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort();
  const parts = keys.map((key) => `${key}=${labels[key] ?? ""}`);
  return fnv1a64Hex([rule, ...parts].join("\u0000"));
}
