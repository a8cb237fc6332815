// End to end in a real browser (Debian's headless Chromium, driven by playwright-core) against the built daemon on
// the embedded simulator: the page shows a simulator fault as a firing alert within seconds, a silence created
// from the page's dialog keeps the alert's next notifications from the webhook, and expiring it from the page
// lets them through again. Screenshots (light, dark) go to test-output/ (git-ignored).
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { type BrowserContext, type Page } from "playwright-core";
import { launchChromium, SKIP_BROWSER } from "./chromium.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { ensureBuilt, killAllDaemons, ROOT, startDaemon, type LogLine } from "./daemon.js";
import { makeWorkDir, removeWorkDirs, testConfig, writeConfig } from "./fixtures.js";
import { accepted, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

// in CI a missing browser is a failure (.ci/run installs it); on a workstation the test is skipped
const skip = SKIP_BROWSER;

const SECRET = "e2e-webhook-secret-status-page";
const TOKEN = "e2e-page-token-4b1d";
/** The 10 s price_change window needs that much polled history before a spike can fire it. */
const WINDOW_HISTORY_MS = 10_500;
/** Reminders of a firing alert: each one is a notification a silence has to keep from the webhook. */
const REPEAT_MS = 2_000;
const OUTPUT = join(ROOT, "test-output");

/** One item of the page's firing-alert list as the test reads it. */
interface ListedAlert {
  readonly id: string;
  readonly rule: string;
  readonly causedBy: string | null;
  readonly link: string | null;
  readonly linkText: string;
}

/** The alert of a daemon log line (every transition the hub publishes is logged). */
const alertOf = (line: LogLine): AlertPayload | undefined =>
  line["event"] === "alert" ? (line["alert"] as AlertPayload) : undefined;
const seqOf = (line: LogLine): number => Number(line["seq"]);

describe.skipIf(skip)("the status page in headless Chromium", () => {
  let browser: BrowserContext;
  let profile: string;
  let hook: WebhookReceiver;

  beforeAll(async () => {
    ensureBuilt();
    ({ browser, profile } = await launchChromium({
      viewport: { width: 1200, height: 900 },
      colorScheme: "light",
    }));
    hook = await startWebhookReceiver(SECRET, 200);
    mkdirSync(OUTPUT, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await hook?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });
  afterEach(async () => {
    await killAllDaemons();
    removeWorkDirs();
  });

  it("shows a fault firing, silences it from the page (no notification), expires it (notifications resume)", async () => {
    const work = makeWorkDir();
    // three pairs, so the targets table and the screenshots show more than the one that fires
    const config = testConfig(work, {
      extraPairs: ["ETH/USD", "SOL/USD"],
      webhook: { url: hook.url, secret: SECRET },
    });
    writeConfig(work, {
      ...config,
      rules: [
        {
          kind: "price_change",
          id: "price_change_10s",
          windowMs: 10_000,
          threshold: 0.02,
          repeatIntervalMs: REPEAT_MS,
        },
      ],
      server: { token: TOKEN },
    });
    const daemon = await startDaemon(work.configFile, { cwd: work.dir });
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });

    // the token arrives in the fragment and leaves the address bar at once
    await page.goto(`${daemon.httpUrl}/#token=${TOKEN}`);
    await expect.poll(() => page.url()).toBe(`${daemon.httpUrl}/`);
    await expect.poll(() => page.locator("#banner-title").textContent(), { timeout: 8_000 }).toBe("All good");
    await expect.poll(() => page.locator("#targets tr").count(), { timeout: 8_000 }).toBeGreaterThan(0);

    // a fault at the simulator: the firing alert is on the page within seconds, pushed over the WebSocket
    await delay(WINDOW_HISTORY_MS);
    const faultAtMs = Date.now();
    const response = await fetch(`${daemon.simulatorUrl}/_sim/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "spike", pair: "BTC/USD", factor: 1.06, durationMs: 120_000 }),
    });
    expect(response.status).toBe(201);
    const item = page.locator("#alerts li", { hasText: "BTC/USD moved" });
    await item.waitFor({ timeout: 8_000 });
    expect(Date.now() - faultAtMs).toBeLessThan(8_000);
    await expect.poll(() => page.locator("#banner-title").textContent()).toBe("1 firing");
    const firing = await hook.deliveries.waitFor(
      (d) => d.event?.alert.labels["pair"] === "BTC/USD" && d.event.alert.status === "firing",
      { timeoutMs: 5_000, what: "BTC/USD firing at the webhook" },
    );
    const fingerprint = firing.event!.alert.fingerprint;
    await page.screenshot({ path: join(OUTPUT, "status-page-light.png"), fullPage: true });

    const silenceId = await silenceFromPage(page, item);
    await expectSilencedReminders(daemon, hook, fingerprint, silenceId);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: join(OUTPUT, "status-page-dark.png"), fullPage: true });

    // expire it from the page: the alert is announced again, unmuted, and reaches the webhook
    const sinceExpiry = hook.deliveries.mark();
    await page.getByRole("button", { name: `Expire silence ${silenceId}` }).click();
    await page
      .locator(`#silences li[data-state="expired"]`, { hasText: "BTC/USD" })
      .waitFor({ timeout: 5_000 });
    await expect.poll(() => item.locator(".silenced-by").isHidden(), { timeout: 5_000 }).toBe(true);
    const unmuted = await hook.deliveries.waitFor(
      (d) => d.event?.alert.fingerprint === fingerprint && d.event.alert.status === "firing",
      {
        from: sinceExpiry,
        timeoutMs: 5_000,
        what: "BTC/USD notified again after the page expired its silence",
      },
    );
    expect(unmuted.event?.alert.silencedBy).toBeUndefined();
    expect(violations).toEqual([]);
  }, 120_000);

  it("lists the per-target upstream_error alerts right under the upstream_down alert that caused them", async () => {
    const work = makeWorkDir();
    const config = testConfig(work, { extraPairs: ["ETH/USD", "SOL/USD", "STRK/USD"] });
    writeConfig(work, {
      ...config,
      rules: [
        { kind: "upstream_error", threshold: 3 },
        { kind: "upstream_down", threshold: 3, minFraction: 0.5, windowMs: 5_000 },
      ],
      server: { token: TOKEN },
    });
    const daemon = await startDaemon(work.configFile, { cwd: work.dir });
    const page = await browser.newPage();
    await page.goto(`${daemon.httpUrl}/#token=${TOKEN}`);
    await expect.poll(() => page.locator("#banner-title").textContent(), { timeout: 8_000 }).toBe("All good");
    const response = await fetch(`${daemon.simulatorUrl}/_sim/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "outage", status: 500, retryAfterS: 0, durationMs: 60_000 }),
    });
    expect(response.status).toBe(201);
    // the parent and its four children, in list order: the parent first, each child right after it
    const items = page.locator("#alerts li");
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(5);
    // an expression as a string: the tests compile without the DOM lib
    const rows = await page.evaluate<ListedAlert[]>(
      `Array.from(document.querySelectorAll("#alerts li")).map((e) => ({
        id: e.id,
        rule: e.querySelector(".rule")?.textContent ?? "",
        causedBy: e.getAttribute("data-caused-by"),
        link: e.querySelector(".caused-by a")?.getAttribute("href") ?? null,
        linkText: e.querySelector(".caused-by")?.textContent ?? "",
      }))`,
    );
    const [parent, ...children] = rows;
    expect(parent).toMatchObject({ rule: "upstream_down", causedBy: null });
    expect(children.map((child) => child.rule)).toEqual(Array(4).fill("upstream_error"));
    for (const child of children) {
      expect(`alert-${child.causedBy?.replace(/[^A-Za-z0-9_-]/g, "_")}`).toBe(parent?.id);
      expect(child.link).toBe(`#${parent?.id}`);
      expect(child.linkText).toMatch(/^caused by upstream_down: Pragma API failing \(HTTP 500\)/);
    }
    await page.screenshot({ path: join(OUTPUT, "status-page-caused-by.png"), fullPage: true });
  }, 90_000);
});

/**
 * Open the silence dialog from the alert by keyboard (Escape closes it and gives focus back), check the matchers
 * it prefills, create a one-hour silence, and wait for the page to show it; returns its id.
 */
async function silenceFromPage(page: Page, item: ReturnType<Page["locator"]>): Promise<string> {
  const button = item.getByRole("button", { name: /^Silence price_change/ });
  // expressions as strings: the tests compile without the DOM lib
  const dialogOpen = (): Promise<boolean> =>
    page.evaluate<boolean>("document.getElementById('silence-dialog').open");
  const focused = (): Promise<string> =>
    page.evaluate<string>(
      "document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id ?? ''",
    );
  await button.focus();
  await page.keyboard.press("Enter");
  expect(await dialogOpen()).toBe(true);
  expect(await focused()).toBe("silence-author");
  await page.keyboard.press("Escape");
  expect(await dialogOpen()).toBe(false);
  expect(await focused()).toMatch(/^Silence price_change/);
  await page.keyboard.press("Enter");
  expect(await dialogOpen()).toBe(true);
  const rows = page.locator("#matcher-rows .matcher-row");
  const prefilled: Record<string, string> = {};
  for (let index = 0; index < (await rows.count()); index++) {
    const row = rows.nth(index);
    prefilled[await row.locator(".m-name").inputValue()] = await row.locator(".m-value").inputValue();
  }
  expect(prefilled).toMatchObject({ rule: "price_change", pair: "BTC/USD", market: "offchain" });
  await page.getByLabel(/^Duration/).fill("1h");
  await page.getByLabel("Author").fill("e2e operator");
  await page.getByLabel("Comment").fill("known spike, silenced from the status page");
  await page.locator("#silence-submit").focus();
  await page.keyboard.press("Enter");
  await expect.poll(dialogOpen, { timeout: 5_000 }).toBe(false);
  const listed = page.locator(`#silences li[data-state="active"]`, { hasText: "BTC/USD" });
  await listed.waitFor({ timeout: 5_000 });
  const link = item.locator(".silenced-by a");
  await link.waitFor({ timeout: 5_000 });
  await expect.poll(() => page.locator("#banner-title").textContent()).toBe("All good");
  return (await link.textContent()) ?? "";
}

/** The alert goes on (its reminders are journaled and logged, muted by the silence) but reaches no webhook. */
async function expectSilencedReminders(
  daemon: Awaited<ReturnType<typeof startDaemon>>,
  hook: WebhookReceiver,
  fingerprint: string,
  silenceId: string,
): Promise<void> {
  const muted = (line: LogLine): boolean => {
    const alert = alertOf(line);
    return alert?.fingerprint === fingerprint && (alert.silencedBy ?? []).includes(silenceId);
  };
  const first = await daemon.logs.waitFor(muted, { timeoutMs: 5_000, what: "the alert published muted" });
  // the next reminder is published muted too: a notification the silence has to keep from the sink
  await daemon.logs.waitFor((line) => muted(line) && seqOf(line) > seqOf(first), {
    timeoutMs: 3 * REPEAT_MS + 2_000,
    what: "a muted reminder",
  });
  // the sink delivers in journal order; give it a moment to have sent anything it was going to send
  await delay(1_000);
  const sentSince = accepted(hook.deliveries.items, fingerprint, "firing").filter(
    (d) => (d.event?.seq ?? 0) >= seqOf(first),
  );
  expect(sentSince).toEqual([]);
}
