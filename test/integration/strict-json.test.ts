// The duplicate-detecting JSON parser the log tests rely on: it agrees with JSON.parse and refuses repeated keys.
import { describe, expect, it } from "vitest";
import { parseStrictJson } from "./strict-json.js";

describe("parseStrictJson", () => {
  it.each([
    '{"a":1,"b":[true,false,null,-1.5e3,"x\\"y"],"c":{"a":{}}}',
    "[]",
    '  {"k" : "v" , "n" : [ 1 , 2 ] }  ',
    '"\\u00e9\\\\"',
  ])("parses %s like JSON.parse", (text) => {
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it.each([
    ['{"component":"sinks","component":"chatops"}', 'duplicate key "component"'],
    ['{"a":{"host":"x","host":"y"}}', 'duplicate key "host"'],
    ['{"a":1,}', "expected a key"],
    ['{"a":1} x', "trailing characters"],
  ])("rejects %s", (text, message) => {
    expect(() => parseStrictJson(text)).toThrow(message);
  });
});
