// Pure renderer tests: each service's documented required fields, limits and escaping.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- the tests walk rendered JSON bodies (typed `any` on purpose) */
import { createHmac, timingSafeEqual } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { alertnameOf, renderAlertmanager } from "../../../src/sinks/chatops/alertmanager.js";
import { DISCORD_COLOURS, renderDiscord } from "../../../src/sinks/chatops/discord.js";
import { digestHeadline, groupDigest } from "../../../src/sinks/chatops/format.js";
import { renderPagerDuty } from "../../../src/sinks/chatops/pagerduty.js";
import { renderSlack } from "../../../src/sinks/chatops/slack.js";
import { renderTelegram, TELEGRAM_TEXT_MAX_CHARS } from "../../../src/sinks/chatops/telegram.js";
import { renderWebhook } from "../../../src/sinks/chatops/webhook.js";
import { makeAlert, makeEvent, nthAlert, resolvedOf } from "./helpers.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads of rendered JSON

const parse = (body: string): Json => JSON.parse(body) as Json;
const firing = { kind: "alert" as const, event: makeEvent(1042) };
const resolved = { kind: "alert" as const, event: makeEvent(1043, resolvedOf(makeAlert())) };
const digest = {
  kind: "digest" as const,
  events: [
    ...Array.from({ length: 7 }, (_, i) => makeEvent(i + 1, nthAlert(i))),
    makeEvent(8, resolvedOf(nthAlert(20))),
    makeEvent(9, resolvedOf(nthAlert(21))),
  ],
};

/** The receiver-side check documented in docs/webhooks.md. */
function verifyWebhook(
  secret: string,
  headers: Record<string, string>,
  rawBody: string,
  nowS: number,
): boolean {
  const timestamp = headers["x-pragma-timestamp"] ?? "";
  const signature = headers["x-signature-256"] ?? "";
  if (!/^\d+$/.test(timestamp) || Math.abs(nowS - Number(timestamp)) > 300) return false;
  const expected = "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex");
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

describe("renderSlack", () => {
  it("renders Block Kit with a text fallback, a header, summary and fields", () => {
    const body = parse(renderSlack(firing).body);
    expect(body.text).toContain("BTC/USD price_change");
    expect(body.blocks[0]).toMatchObject({ type: "header", text: { type: "plain_text" } });
    expect(body.blocks[0].text.text).toMatch(/^🔴 FIRING \[critical\] BTC\/USD price_change/);
    expect(body.blocks[1].text.text).toBe("BTC/USD moved +5.02% in 1min (threshold 2%)");
    const fields = body.blocks
      .flatMap((b: Json) => (b.fields ?? []) as Json[])
      .map((f: Json) => f.text as string);
    expect(fields).toEqual(
      expect.arrayContaining([
        "*Rule*\nprice_change",
        "*pair*\nBTC/USD",
        "*Value*\n0.0502",
        "*Threshold*\n0.02",
      ]),
    );
    expect(fields).toContain("*Started*\n2026-11-22T10:00:03.120Z");
    for (const block of body.blocks as Json[]) expect((block.fields ?? []).length).toBeLessThanOrEqual(10);
  });

  it("says how long a resolved alert fired and escapes mrkdwn control characters", () => {
    const body = parse(renderSlack(resolved).body);
    expect(body.blocks[0].text.text).toMatch(/^✅ RESOLVED/);
    expect(body.text).toContain("fired for 5m 3s");
    const odd = parse(
      renderSlack({ kind: "alert", event: makeEvent(1, makeAlert({ summary: "a<b & c>d" })) }).body,
    );
    expect(odd.blocks[1].text.text).toBe("a&lt;b &amp; c&gt;d");
  });

  it("renders a digest with the coalesced counts", () => {
    const body = parse(renderSlack(digest).body);
    expect(body.text).toMatch(
      /^7 alerts firing: T0\/USD price_change, .*; 2 resolved: T20\/USD price_change/,
    );
    expect(body.blocks[0].text.text).toBe("📋 Digest: 7 firing, 2 resolved");
  });
});

describe("renderDiscord", () => {
  it("renders one embed with title, description, fields, severity colour and timestamp", () => {
    const body = parse(renderDiscord(firing).body);
    expect(body.allowed_mentions).toEqual({ parse: [] });
    const embed = body.embeds[0] as Json;
    expect(embed.color).toBe(DISCORD_COLOURS.critical);
    expect(embed.timestamp).toBe("2026-11-22T10:00:03.120Z");
    expect(embed.description).toBe(makeAlert().summary);
    expect(embed.fields).toEqual(expect.arrayContaining([{ name: "pair", value: "BTC/USD", inline: true }]));
  });

  it("is green when resolved and keeps titles within 256 characters", () => {
    expect(parse(renderDiscord(resolved).body).embeds[0].color).toBe(DISCORD_COLOURS.resolved);
    const long = makeAlert({ labels: { pair: "X".repeat(400) } });
    const embed = parse(renderDiscord({ kind: "alert", event: makeEvent(1, long) }).body).embeds[0] as Json;
    expect((embed.title as string).length).toBeLessThanOrEqual(256);
    expect(parse(renderDiscord(digest).body).embeds[0].title).toBe("📋 Digest: 7 firing, 2 resolved");
  });
});

describe("renderTelegram", () => {
  it("sends chat_id, HTML parse mode and escapes &, < and >", () => {
    const alert = makeAlert({ summary: "<script> & co >" });
    const body = parse(
      renderTelegram({ kind: "alert", event: makeEvent(1, alert) }, { chatId: "-10042" }).body,
    );
    expect(body.chat_id).toBe("-10042");
    expect(body.parse_mode).toBe("HTML");
    expect(body.text).toContain("&lt;script&gt; &amp; co &gt;");
    expect(body.text).not.toContain("<script>");
  });

  it("stays within 4096 characters for huge alerts and digests", () => {
    const huge = makeAlert({ summary: "<&>".repeat(3000), labels: { pair: "Y".repeat(5000) } });
    const one = parse(renderTelegram({ kind: "alert", event: makeEvent(1, huge) }, { chatId: "1" }).body);
    expect((one.text as string).length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX_CHARS);
    const many = {
      kind: "digest" as const,
      events: Array.from({ length: 500 }, (_, i) => makeEvent(i, nthAlert(i))),
    };
    const text = parse(renderTelegram(many, { chatId: "1" }).body).text as string;
    expect(text.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX_CHARS);
    expect(text).toMatch(/… and \d+ more$/);
  });
});

describe("renderPagerDuty", () => {
  it("triggers with routing_key, dedup_key = fingerprint and the required payload fields", () => {
    const body = parse(renderPagerDuty(makeEvent(7), { routingKey: "rk" }).body);
    expect(body).toMatchObject({ routing_key: "rk", event_action: "trigger", dedup_key: "9f2c41d0a7b3e6f1" });
    expect(body.payload).toMatchObject({
      summary: makeAlert().summary,
      source: "pragma-monitor",
      severity: "critical",
      timestamp: "2026-11-22T10:00:03.120Z",
    });
    expect(body.payload.custom_details).toMatchObject({ seq: 7, value: 0.0502, labels: { pair: "BTC/USD" } });
  });

  it.each([
    ["critical", "critical"],
    ["warning", "warning"],
    ["info", "info"],
  ] as const)("maps severity %s to %s", (ours, theirs) => {
    const body = parse(
      renderPagerDuty(makeEvent(1, makeAlert({ severity: ours })), { routingKey: "rk" }).body,
    );
    expect(body.payload.severity).toBe(theirs);
  });

  it("resolves by dedup_key", () => {
    const body = parse(renderPagerDuty(makeEvent(8, resolvedOf(makeAlert())), { routingKey: "rk" }).body);
    expect(body).toEqual({ routing_key: "rk", dedup_key: "9f2c41d0a7b3e6f1", event_action: "resolve" });
  });
});

describe("renderAlertmanager", () => {
  const nowMs = Date.parse("2026-11-22T10:01:00.000Z");
  it("posts an array with alertname, severity, labels, annotations and endsAt 4 resends ahead", () => {
    const body = parse(
      renderAlertmanager(firing, { nowMs, resendIntervalMs: 60_000 }).body,
    ) as unknown as Json[];
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({
      labels: { alertname: "price_change", severity: "critical", pair: "BTC/USD", entry_type: "spot" },
      annotations: { summary: makeAlert().summary },
      startsAt: "2026-11-22T10:00:03.120Z",
      endsAt: "2026-11-22T10:05:00.000Z",
    });
  });

  it("sets endsAt to the resolve time and sends digests as one array", () => {
    const body = parse(
      renderAlertmanager(resolved, { nowMs, resendIntervalMs: 60_000 }).body,
    ) as unknown as Json[];
    expect(body[0]!.endsAt).toBe(resolvedOf(makeAlert()).endsAt);
    const many = parse(
      renderAlertmanager(digest, { nowMs, resendIntervalMs: 60_000 }).body,
    ) as unknown as Json[];
    expect(many).toHaveLength(9);
  });

  it.each([
    ["a rule without an id", {}, "price_change", undefined],
    ["a rule with an id", { rule_id: "btc_fast_move" }, "btc_fast_move", "price_change"],
  ])("names %s after its id, and keeps the kind routable", (_name, extra, alertname, rule) => {
    const alert = makeAlert({ labels: { ...makeAlert().labels, ...extra } });
    const [posted] = parse(
      renderAlertmanager({ kind: "alert", event: makeEvent(1, alert) }, { nowMs, resendIntervalMs: 60_000 })
        .body,
    ) as unknown as { labels: Record<string, string> }[];
    expect(posted!.labels.alertname).toBe(alertname);
    expect(posted!.labels.rule).toBe(rule);
  });

  it("names the watchdog Watchdog, Alertmanager's convention for the always-firing alert", () => {
    const watchdog = makeAlert({ rule: "watchdog", severity: "info", labels: {} });
    expect(alertnameOf(watchdog)).toBe("Watchdog");
  });

  it("links each alert back to the daemon through generatorURL", () => {
    const link = (fp: string): string => `https://pm.example/api/v1/alerts?fingerprint=${fp}`;
    const body = parse(
      renderAlertmanager(firing, { nowMs, resendIntervalMs: 60_000, generatorUrl: link }).body,
    ) as unknown as Json[];
    expect(body[0]!.generatorURL).toBe(link(makeAlert().fingerprint));
  });
});

describe("renderWebhook", () => {
  it("sends the exact §3 event JSON, signed as documented, with a delivery id", () => {
    const nowMs = Date.parse("2026-11-22T10:00:05.000Z");
    const out = renderWebhook(firing, { secret: "s3cret", nowMs, deliveryId: "d-1" });
    expect(out.body).toBe(JSON.stringify({ type: "alert", seq: 1042, alert: makeAlert() }));
    expect(out.body.startsWith('{"type":"alert","seq":1042,"alert":{"fingerprint"')).toBe(true);
    expect(out.headers["x-pragma-timestamp"]).toBe(String(nowMs / 1000));
    expect(out.headers["x-pragma-delivery"]).toBe("d-1");
    expect(verifyWebhook("s3cret", { ...out.headers }, out.body, nowMs / 1000)).toBe(true);
    expect(verifyWebhook("wrong", { ...out.headers }, out.body, nowMs / 1000)).toBe(false);
    expect(verifyWebhook("s3cret", { ...out.headers }, out.body + " ", nowMs / 1000)).toBe(false);
    expect(verifyWebhook("s3cret", { ...out.headers }, out.body, nowMs / 1000 + 301)).toBe(false);
  });

  it("wraps a digest as {type: digest, events}", () => {
    const out = renderWebhook(digest, { secret: "s", nowMs: 0, deliveryId: "d" });
    expect(parse(out.body)).toMatchObject({ type: "digest", count: 9 });
    expect(parse(out.body).events[0]).toEqual(makeEvent(1, nthAlert(0)));
  });
});

describe("digest grouping", () => {
  it("keeps the last transition per fingerprint", () => {
    const a = nthAlert(1);
    const groups = groupDigest([makeEvent(1, a), makeEvent(2, resolvedOf(a)), makeEvent(3, nthAlert(2))]);
    expect(groups.firing.map((x) => x.fingerprint)).toEqual([nthAlert(2).fingerprint]);
    expect(digestHeadline(groups)).toBe(
      "1 alert firing: T2/USD price_change; 1 resolved: T1/USD price_change",
    );
  });
});

describe("renderer limits (property)", () => {
  it("stays within Slack, Discord and Telegram limits for arbitrary text", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 6000 });
    fc.assert(
      fc.property(
        text,
        text,
        fc.dictionary(fc.string({ maxLength: 40 }), text, { maxKeys: 30 }),
        (summary, pair, extra) => {
          const alert = makeAlert({ summary, labels: { ...extra, pair } });
          const message = { kind: "alert" as const, event: makeEvent(1, alert) };
          const slack = parse(renderSlack(message).body);
          expect((slack.blocks[0].text.text as string).length).toBeLessThanOrEqual(150);
          for (const block of slack.blocks as Json[]) {
            if (typeof block.text?.text === "string")
              expect(block.text.text.length).toBeLessThanOrEqual(3000);
            expect((block.fields ?? []).length).toBeLessThanOrEqual(10);
          }
          const embed = parse(renderDiscord(message).body).embeds[0] as Json;
          expect((embed.title as string).length).toBeLessThanOrEqual(256);
          expect(embed.fields.length).toBeLessThanOrEqual(25);
          const total = [
            embed.title,
            embed.description,
            embed.footer.text,
            ...embed.fields.flatMap((f: Json): string[] => [f.name as string, f.value as string]),
          ];
          expect(total.reduce((sum: number, t: string) => sum + t.length, 0)).toBeLessThanOrEqual(6000);
          const tg = parse(renderTelegram(message, { chatId: "1" }).body).text as string;
          expect(tg.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX_CHARS);
          expect(tg.replace(/<\/?(b|code)>/g, "")).not.toMatch(/[<>]/);
        },
      ),
      { numRuns: 200 },
    );
  });
});
