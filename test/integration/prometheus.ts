// A strict reader of the Prometheus text exposition format (0.0.4), so tests can assert /metrics parses and query samples.

/** One sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"\s*(,|$)/y;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

/** Parse the whole text; throws on the first malformed line (with its number), or on a sample of an undeclared family. */
export function parsePrometheusText(text: string): readonly Sample[] {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  text.split("\n").forEach((line, index) => {
    const fail = (why: string): never => {
      throw new Error(`line ${index + 1}: ${why}: ${JSON.stringify(line)}`);
    };
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const parts = line.split(" ");
      if (parts[1] === "TYPE") {
        if (parts.length !== 4 || !NAME.test(parts[2] ?? "") || !TYPES.has(parts[3] ?? "")) fail("bad TYPE");
        types.set(parts[2]!, parts[3]!);
      } else if (parts[1] === "HELP" && !NAME.test(parts[2] ?? "")) fail("bad HELP");
      return;
    }
    const match = SAMPLE.exec(line) ?? fail("not a sample");
    const [, name, labelText, valueText] = match;
    const labels: Record<string, string> = {};
    if (labelText !== undefined && labelText !== "") {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < labelText.length) {
        const label = LABEL.exec(labelText) ?? fail("bad labels");
        labels[label[1]!] = label[2]!.replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1");
        if (label[3] === "") break;
      }
    }
    const value =
      valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText ?? "");
    // Prometheus parses values with Go's ParseFloat: NaN in any case (prom-client writes "Nan")
    if (Number.isNaN(value) && valueText?.toLowerCase() !== "nan") fail("bad value");
    const family = [
      name!,
      ...SUFFIXES.filter((s) => name!.endsWith(s)).map((s) => name!.slice(0, -s.length)),
    ];
    if (!family.some((f) => types.has(f))) fail("sample without a TYPE line");
    samples.push({ name: name!, labels, value });
  });
  return samples;
}

/** Value of the sample with this name and (at least) these labels; undefined when absent. */
export function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  )?.value;
}
