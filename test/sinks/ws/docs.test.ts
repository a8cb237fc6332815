// docs/websocket.md promises exactly the error codes and close codes the server uses.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../../../src/config/package-root.js";
import { ERROR_CODES } from "../../../src/sinks/ws/protocol.js";

const doc = readFileSync(join(packageRoot(), "docs", "websocket.md"), "utf8");

/** First-column values of the markdown table that follows `heading` (a line that starts the table's section). */
function tableKeys(after: string): string[] {
  const start = doc.indexOf(after);
  expect(start, `docs/websocket.md has "${after}"`).toBeGreaterThan(-1);
  const rows: string[] = [];
  let inTable = false;
  for (const line of doc.slice(start).split("\n").slice(1)) {
    if (line.startsWith("|")) {
      inTable = true;
      const key = line.split("|")[1]?.trim().replaceAll("`", "") ?? "";
      if (!/^-+$/.test(key) && key !== "code") rows.push(key);
    } else if (inTable) break;
  }
  return rows;
}

it("documents every error code the server sends, and no other", () => {
  expect(tableKeys("(a `rate_limited` reply too)").sort()).toEqual([...ERROR_CODES].sort());
});

it("documents every close code the server or its WebSocket layer uses, 1007 included", () => {
  expect(tableKeys("Close codes:")).toEqual(["1001", "1007", "1008", "1009", "1011", "1013"]);
});
