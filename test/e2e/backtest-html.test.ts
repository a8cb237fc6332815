// The backtest's --html report in headless Chromium: opens from the file alone (no other request, no console error),
// one chart per target with its transition markers drawn, light and dark colour schemes, hostile names inert.
// Screenshots (light, dark) go to test-output/ (git-ignored).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderHtmlReport } from "../../src/backtest/html-report.js";
import { runBacktest } from "../../src/cli/backtest.js";
import { tempDir, writeConfig, writeRecording } from "../backtest/helpers.js";
import { BTC, ETH, HTML_CONFIG, htmlRecording } from "../backtest/html-fixture.js";
import { launchChromium, SKIP_BROWSER } from "./chromium.js";
import { ROOT } from "./daemon.js";

const OUTPUT = join(ROOT, "test-output");

/** A page that records every request, console error and uncaught error. */
async function openWatched(
  browser: BrowserContext,
  url: string,
): Promise<{ page: Page; requests: string[]; errors: string[]; dialogs: string[] }> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  const dialogs: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, requests, errors, dialogs };
}

/** The computed colour of `selector`'s first match (`property` of its style; evaluated as text: no DOM types here). */
const colourOf = (
  page: Page,
  selector: string,
  property: "backgroundColor" | "stroke" | "fill",
): Promise<string> =>
  page.evaluate<string>(
    `getComputedStyle(document.querySelector(${JSON.stringify(selector)}))[${JSON.stringify(property)}]`,
  );

describe.skipIf(SKIP_BROWSER)("backtest --html in headless Chromium", () => {
  let browser: BrowserContext;
  let profile: string;
  let dir: string;

  beforeAll(async () => {
    ({ browser, profile } = await launchChromium({
      viewport: { width: 1100, height: 900 },
      colorScheme: "light",
    }));
    dir = tempDir("pm-backtest-html-");
    mkdirSync(OUTPUT, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("opens alone, draws a chart per target with its markers, in light and dark", async () => {
    const rec = join(dir, "rec");
    await writeRecording(rec, htmlRecording());
    const file = join(dir, "report.html");
    const code = runBacktest(
      ["--config", writeConfig(dir, HTML_CONFIG), "--recording", rec, "--html", file],
      {
        stdout: { write: () => true },
        stderr: { write: () => true },
        env: {},
        cwd: dir,
      },
    );
    expect(code).toBe(0);
    const url = pathToFileURL(file).href;
    const { page, requests, errors } = await openWatched(browser, url);

    const charts = page.locator("svg.chart");
    expect(await charts.count()).toBe(2);
    for (const target of [BTC, ETH])
      expect(await page.locator(`section[data-target="${target}"] svg.chart`).isVisible()).toBe(true);
    const markers = (target: string, status: string) =>
      page.locator(`section[data-target="${target}"] g.marker.${status} path`);
    expect(await markers(ETH, "firing").count()).toBe(2);
    expect(await markers(ETH, "resolved").count()).toBe(2);
    expect(await markers(BTC, "firing").count()).toBe(1);
    expect(await markers(BTC, "resolved").count()).toBe(1);
    for (const marker of await page.locator("g.marker path").all()) {
      expect(await marker.isVisible()).toBe(true);
      expect((await marker.boundingBox())?.width).toBeGreaterThan(3);
    }
    // the markers take the theme's colours, not the default black fill
    expect(await colourOf(page, "g.marker.firing path", "fill")).toBe("rgb(207, 34, 46)");
    expect(await colourOf(page, "g.marker.resolved path", "fill")).toBe("rgb(26, 127, 55)");
    const lightBackground = await colourOf(page, "body", "backgroundColor");
    expect(lightBackground).toBe("rgb(255, 255, 255)");
    await page.screenshot({ path: join(OUTPUT, "backtest-report-light.png"), fullPage: true });

    await page.emulateMedia({ colorScheme: "dark" });
    expect(await colourOf(page, "body", "backgroundColor")).toBe("rgb(13, 17, 23)");
    expect(await colourOf(page, "polyline.price", "stroke")).toBe("rgb(68, 147, 248)");
    expect(await colourOf(page, "g.marker.firing path", "fill")).toBe("rgb(255, 123, 114)");
    expect(await colourOf(page, "g.marker.resolved path", "fill")).toBe("rgb(63, 185, 80)");
    await page.screenshot({ path: join(OUTPUT, "backtest-report-dark.png"), fullPage: true });

    expect(requests).toEqual([url]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows hostile pair names and summaries as text: no script runs, no element is injected", async () => {
    const hostile = `<img src=x onerror="alert(1)"><script>alert(2)</script>`;
    const spec = {
      kind: "offchain",
      id: `offchain:${hostile}`,
      pair: hostile,
      entryType: "spot",
      aggregation: "median",
      interval: "1s",
      expiry: null,
    } as const;
    const fromMs = Date.parse("2026-11-21T08:00:00.000Z");
    const html = renderHtmlReport({
      title: hostile,
      report: {
        from: new Date(fromMs).toISOString(),
        to: new Date(fromMs + 10_000).toISOString(),
        observations: 2,
        rules: [],
        sinks: [],
        problems: [],
        complete: true,
        timeline: [],
      },
      targets: [spec],
      prices: new Map([
        [
          spec.id,
          [
            { atMs: fromMs, price: 1 },
            { atMs: fromMs + 10_000, price: 2 },
          ],
        ],
      ]),
      transitions: [],
    });
    const file = join(dir, "hostile.html");
    writeFileSync(file, html);
    const url = pathToFileURL(file).href;
    const { page, requests, errors, dialogs } = await openWatched(browser, url);
    expect(await page.title()).toBe(hostile);
    expect(await page.locator("h3").first().textContent()).toContain(hostile);
    expect(await page.locator("img, script").count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(requests).toEqual([url]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
