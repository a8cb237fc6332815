// A real browser (Debian's headless Chromium via playwright-core) cannot read the stream from another origin.
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, SKIP_BROWSER } from "./chromium.js";
import { startTestApp, type TestApp } from "../integration/harness.js";
import { WsClient } from "../integration/ws-client.js";

// in CI a missing browser is a failure (.ci/run installs it); on a workstation the test is skipped
const skip = SKIP_BROWSER;

/** A page that opens the daemon's WebSocket and reports how it went: the hello frame, or the failure. */
function probePage(wsUrl: string): string {
  return `<!doctype html><title>probe</title><script>
window.outcome = new Promise((resolve) => {
  const ws = new WebSocket(${JSON.stringify(wsUrl)});
  ws.onmessage = (event) => { resolve("message " + String(event.data).slice(0, 24)); ws.close(); };
  ws.onerror = () => resolve("error");
  ws.onclose = (event) => resolve("closed " + event.code);
});
</script>`;
}

/** A tiny page server on 127.0.0.1:0: another port is another origin. */
async function servePage(html: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8", connection: "close" });
    response.end(html());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(skip)("headless Chromium against the Origin rules", () => {
  let daemon: TestApp;
  let browser: BrowserContext;
  let profile: string;
  const pages: Server[] = [];
  let foreign: string;
  let listed: string;

  beforeAll(async () => {
    let wsUrl = "";
    const a = await servePage(() => probePage(wsUrl));
    const b = await servePage(() => probePage(wsUrl));
    pages.push(a.server, b.server);
    foreign = a.origin;
    listed = b.origin;
    daemon = await startTestApp({ server: { allowedOrigins: [listed] } });
    wsUrl = daemon.wsUrl;
    ({ browser, profile } = await launchChromium());
  }, 20_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
    for (const server of pages) server.closeAllConnections();
    await Promise.all(pages.map((server) => new Promise((resolve) => server.close(resolve))));
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  const outcomeFrom = async (origin: string): Promise<string> => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      // an expression string: the test is compiled without the DOM lib
      return await page.evaluate<string>("window.outcome");
    } finally {
      await page.close();
    }
  };

  it("a page from another origin cannot open the stream; a listed origin and a non-browser client can", async () => {
    expect(await outcomeFrom(foreign)).toMatch(/^(error|closed 1006)$/);
    // the same page from an allowed origin gets hello: the refusal above is the Origin rule, not the browser
    expect(await outcomeFrom(listed)).toMatch(/^message \{"type":"hello"/);
    const { client, hello } = await WsClient.connect(daemon.wsUrl);
    expect(hello.type).toBe("hello");
    client.close();
    const refused = daemon.logs.lines.filter((line) => line.msg === "refused WebSocket upgrade");
    expect(refused).toMatchObject([{ reason: "origin", origin: foreign }]);
  });
});
