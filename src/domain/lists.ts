// Comparisons of plain lists, shared by the domain and the layers above it.

/** Whether two string lists hold the same strings in the same order (sorted id lists, a record line's keys). */
export function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}
