// Pure renderer tests: each service's documented required fields, limits and escaping.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- the tests walk rendered JSON bodies (typed `any` on purpose) */
import { createHmac, timingSafeEqual } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { alertnameOf, renderAlertmanager } from "../../../src/sinks/chatops/alertmanager.js";
import { DISCORD_COLOURS, renderDiscord } from "../../../src/sinks/chatops/discord.js";
import { groupHeadline, latestPerFingerprint } from "../../../src/sinks/chatops/format.js";
import type { GroupAlert } from "../../../src/sinks/chatops/group-schedule.js";
import type { GroupMessage } from "../../../src/sinks/chatops/types.js";
import type { AlertEvent } from "../../../src/domain/events.js";
import { renderPagerDuty } from "../../../src/sinks/chatops/pagerduty.js";
import { renderSlack } from "../../../src/sinks/chatops/slack.js";
import { renderTelegram, TELEGRAM_TEXT_MAX_CHARS } from "../../../src/sinks/chatops/telegram.js";
import { renderWebhook } from "../../../src/sinks/chatops/webhook.js";
import { makeAlert, makeEvent, nthAlert, resolvedOf } from "./helpers.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads of rendered JSON

const parse = (body: string): Json => JSON.parse(body) as Json;
const firing = { kind: "alert" as const, event: makeEvent(1042) };
const resolved = { kind: "alert" as const, event: makeEvent(1043, resolvedOf(makeAlert())) };
const events = [
  ...Array.from({ length: 7 }, (_, i) =>
    makeEvent(i + 1, nthAlert(i, { severity: i === 3 ? "critical" : "warning" })),
  ),
  makeEvent(8, resolvedOf(nthAlert(20))),
  makeEvent(9, resolvedOf(nthAlert(21))),
];

/** A group notification delivering `delivered`, every alert new (or resolved), most severe first. */
function groupOf(delivered: readonly AlertEvent[], extra: Partial<GroupMessage> = {}): GroupMessage {
  const alerts: GroupAlert[] = delivered.map((event) => ({
    state: event.alert.status === "resolved" ? "resolved" : "new",
    seq: event.seq,
    alert: event.alert,
  }));
  alerts.sort(
    (a, b) =>
      Number(a.alert.status === "resolved") - Number(b.alert.status === "resolved") ||
      Number(b.alert.severity === "critical") - Number(a.alert.severity === "critical"),
  );
  return {
    kind: "group",
    key: "{}",
    labels: {},
    commonLabels: { market: "offchain" },
    status: alerts.some((a) => a.alert.status === "firing") ? "firing" : "resolved",
    alerts,
    events: delivered,
    repeat: false,
    ...extra,
  };
}

const group = groupOf(events);
const alertOf = (event: AlertEvent) => ({ kind: "alert" as const, event });
const batch = { kind: "batch" as const, events };

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

  it("renders a group as one message: counts, the most severe first, then resolved", () => {
    const body = parse(renderSlack(group).body);
    expect(body.text).toBe("🔴 FIRING 9 alerts: 7 new, 2 resolved");
    expect(body.blocks[0].text.text).toBe("🔴 FIRING 9 alerts: 7 new, 2 resolved");
    expect(body.blocks[1].text.text).toBe("*Common labels:* market=offchain");
    const lines = (body.blocks[2].text.text as string).split("\n");
    expect(lines[0]).toBe("🔴 new · T3/USD price_change: T3/USD moved");
    expect(lines[1]).toMatch(/^🟠 new · T0\/USD/);
    expect(lines[8]).toMatch(/^✅ resolved · T21\/USD price_change: T21\/USD moved \(fired for 5m 3s\)$/);
    expect(body.blocks[3].elements[0].text).toBe("pragma-monitor · group `{}` · events #1–#9");
  });

  it('cuts a large group with "and K more" within Slack\'s limits', () => {
    const many = groupOf(Array.from({ length: 300 }, (_, i) => makeEvent(i + 1, nthAlert(i))));
    const body = parse(renderSlack(many).body);
    expect(body.blocks[0].text.text).toBe("🔴 FIRING 300 alerts: 300 new");
    const text = body.blocks[2].text.text as string;
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text).toMatch(/\n… and \d+ more$/);
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
    const embed2 = parse(renderDiscord(group).body).embeds[0] as Json;
    expect(embed2.title).toBe("🔴 FIRING 9 alerts: 7 new, 2 resolved");
    expect(embed2.color).toBe(DISCORD_COLOURS.critical);
    expect(embed2.description).toMatch(/^Common labels: market=offchain\n\n🔴 new · T3\/USD/);
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

  it("stays within 4096 characters for huge alerts and groups", () => {
    const huge = makeAlert({ summary: "<&>".repeat(3000), labels: { pair: "Y".repeat(5000) } });
    const one = parse(renderTelegram({ kind: "alert", event: makeEvent(1, huge) }, { chatId: "1" }).body);
    expect((one.text as string).length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX_CHARS);
    const many = groupOf(Array.from({ length: 500 }, (_, i) => makeEvent(i, nthAlert(i))));
    const text = parse(renderTelegram(many, { chatId: "1" }).body).text as string;
    expect(text.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX_CHARS);
    expect(text).toMatch(/… and \d+ more$/);
  });
});

describe("renderPagerDuty", () => {
  it("triggers with routing_key, dedup_key = fingerprint and the required payload fields", () => {
    const body = parse(renderPagerDuty(alertOf(makeEvent(7)), { routingKey: "rk" }).body);
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
      renderPagerDuty(alertOf(makeEvent(1, makeAlert({ severity: ours }))), { routingKey: "rk" }).body,
    );
    expect(body.payload.severity).toBe(theirs);
  });

  it("resolves by dedup_key", () => {
    const body = parse(
      renderPagerDuty(alertOf(makeEvent(8, resolvedOf(makeAlert()))), { routingKey: "rk" }).body,
    );
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

  it("sets endsAt to the resolve time and sends a batch as one array", () => {
    const body = parse(
      renderAlertmanager(resolved, { nowMs, resendIntervalMs: 60_000 }).body,
    ) as unknown as Json[];
    expect(body[0]!.endsAt).toBe(resolvedOf(makeAlert()).endsAt);
    const many = parse(
      renderAlertmanager(batch, { nowMs, resendIntervalMs: 60_000 }).body,
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

  it("sends a group as {type: group, groupKey, status, labels, seqs, events, alerts}", () => {
    const out = renderWebhook(group, { secret: "s", nowMs: 0, deliveryId: "d" });
    const body = parse(out.body);
    expect(body).toMatchObject({
      type: "group",
      groupKey: "{}",
      status: "firing",
      repeat: false,
      groupLabels: {},
      commonLabels: { market: "offchain" },
      count: 9,
      seqs: [1, 2, 3, 4, 5, 6, 7, 8, 9],
    });
    expect(body.events[0]).toEqual(events[0]);
    expect(body.alerts[0]).toEqual({ state: "new", seq: 4, alert: nthAlert(3, { severity: "critical" }) });
    expect(body.alerts).toHaveLength(9);
  });
});

describe("renderPagerDuty (groups)", () => {
  it("one incident per group: dedup_key = group key, the worst severity, every alert in custom_details", () => {
    const body = parse(renderPagerDuty(group, { routingKey: "rk" }).body);
    expect(body).toMatchObject({ routing_key: "rk", dedup_key: "{}", event_action: "trigger" });
    expect(body.payload).toMatchObject({
      severity: "critical",
      summary: "🔴 FIRING 9 alerts: 7 new, 2 resolved",
    });
    expect(body.payload.custom_details.alerts).toHaveLength(9);
    expect(body.payload.custom_details.seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("resolves the incident only when the whole group is resolved", () => {
    const closing = groupOf([makeEvent(10, resolvedOf(nthAlert(1)))]);
    expect(parse(renderPagerDuty(closing, { routingKey: "rk" }).body)).toEqual({
      routing_key: "rk",
      dedup_key: "{}",
      event_action: "resolve",
    });
    const long = groupOf(events, { key: `{pair="${"X".repeat(300)}"}` });
    expect(parse(renderPagerDuty(long, { routingKey: "rk" }).body).dedup_key).toMatch(/^group-[0-9a-f]{16}$/);
  });
});

describe("group text", () => {
  it("keeps the last transition per fingerprint of a batch", () => {
    const a = nthAlert(1);
    const latest = latestPerFingerprint([
      makeEvent(1, a),
      makeEvent(2, resolvedOf(a)),
      makeEvent(3, nthAlert(2)),
    ]);
    expect(latest.firing.map((x) => x.fingerprint)).toEqual([nthAlert(2).fingerprint]);
    expect(latest.resolved.map((x) => x.fingerprint)).toEqual([a.fingerprint]);
  });

  it("names the group labels and a reminder in the headline", () => {
    const still = groupOf([makeEvent(1, nthAlert(1))], { labels: { pair: "T1/USD" }, repeat: true });
    expect(
      groupHeadline({ ...still, alerts: still.alerts.map((a) => ({ ...a, state: "firing" as const })) }),
    ).toBe("🔴 FIRING (reminder) 1 alert: 1 still firing · pair=T1/USD");
  });
});

describe("renderer limits (property)", () => {
  it("keeps a group notification within Slack, Discord and Telegram limits for arbitrary alerts", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 600 });
    fc.assert(
      fc.property(
        fc.array(fc.record({ summary: text, pair: text, resolved: fc.boolean() }), {
          minLength: 1,
          maxLength: 60,
        }),
        text,
        (alerts, labelValue) => {
          const message = groupOf(
            alerts.map(({ summary, pair, resolved: isResolved }, i) => {
              const alert = nthAlert(i, { summary, labels: { pair, market: labelValue } });
              return makeEvent(i + 1, isResolved ? resolvedOf(alert) : alert);
            }),
            { labels: { market: labelValue }, commonLabels: { market: labelValue } },
          );
          const slack = parse(renderSlack(message).body);
          expect((slack.blocks[0].text.text as string).length).toBeLessThanOrEqual(150);
          for (const block of slack.blocks as Json[])
            if (typeof block.text?.text === "string")
              expect(block.text.text.length).toBeLessThanOrEqual(3000);
          for (const element of slack.blocks.at(-1).elements as Json[])
            expect((element.text as string).length).toBeLessThanOrEqual(3000);
          const embed = parse(renderDiscord(message).body).embeds[0] as Json;
          expect((embed.title as string).length).toBeLessThanOrEqual(256);
          expect((embed.description as string).length).toBeLessThanOrEqual(4096);
          expect(
            (embed.title as string).length +
              (embed.description as string).length +
              (embed.footer.text as string).length,
          ).toBeLessThanOrEqual(6000);
          const tg = parse(renderTelegram(message, { chatId: "1" }).body).text as string;
          expect(tg.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX_CHARS);
          expect(tg.replace(/<\/?(b|code)>/g, "")).not.toMatch(/[<>]/);
        },
      ),
      { numRuns: 100 },
    );
  });

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
