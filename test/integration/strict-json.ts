// A JSON parser that, unlike JSON.parse, fails on a key repeated in one object (strict log pipelines reject those).

/** Parse `text` as JSON, throwing on any syntax error and on any object that repeats a key. */
export function parseStrictJson(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at offset ${i}: ${text.slice(Math.max(0, i - 40), i + 40)}`);
  };
  const skipSpace = (): void => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const parseString = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const parseValue = (): unknown => {
    skipSpace();
    const c = text[i];
    if (c === "{") return parseObject();
    if (c === "[") return parseArray();
    if (c === '"') return parseString();
    const literal = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 64));
    if (literal === null) return fail("unexpected character");
    i += literal[0].length;
    return JSON.parse(literal[0]) as unknown;
  };
  const parseObject = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    i++;
    skipSpace();
    if (text[i] === "}") return (i++, out);
    for (;;) {
      skipSpace();
      if (text[i] !== '"') fail("expected a key");
      const key = parseString();
      if (seen.has(key)) fail(`duplicate key "${key}"`);
      seen.add(key);
      skipSpace();
      if (text[i++] !== ":") fail("expected ':'");
      out[key] = parseValue();
      skipSpace();
      const next = text[i++];
      if (next === "}") return out;
      if (next !== ",") fail("expected ',' or '}'");
    }
  };
  const parseArray = (): unknown[] => {
    const out: unknown[] = [];
    i++;
    skipSpace();
    if (text[i] === "]") return (i++, out);
    for (;;) {
      out.push(parseValue());
      skipSpace();
      const next = text[i++];
      if (next === "]") return out;
      if (next !== ",") fail("expected ',' or ']'");
    }
  };
  const value = parseValue();
  skipSpace();
  if (i !== text.length) fail("trailing characters");
  return value;
}
