// The page's sections drawn from state: banner, firing alerts, targets, silences, history (DOM, kept in place by key).
import type { Banner } from "./banner.js";
import { h, setAttr, setText, svg, syncList } from "./dom.js";
import {
  describeEvent,
  eventTime,
  formatAge,
  formatClock,
  formatLabels,
  formatValueVsThreshold,
} from "./format.js";
import { canExpire, matcherText } from "./silence-form.js";
import { alertAnchor } from "./alert-order.js";
import { SPARKLINE_BOX, sparklinePath } from "./sparkline.js";
import type { TargetRow } from "./targets.js";
import type { AlertPayload, JournaledEvent, Silence, StatusView } from "./types.js";

/** Elements whose text is an age or a countdown, refreshed every second by `tickTimes`. */
const SINCE = "sinceMs";
const UNTIL = "untilMs";

/** A <time> showing how long ago `atMs` was (or how long until it), kept current by `tickTimes`. */
function timeElement(
  iso: string,
  kind: typeof SINCE | typeof UNTIL,
  atMs: number,
  nowMs: number,
): HTMLTimeElement {
  const element = h("time", { attrs: { datetime: iso } });
  updateTime(element, iso, kind, atMs, nowMs);
  return element;
}

function updateTime(
  element: HTMLElement,
  iso: string,
  kind: typeof SINCE | typeof UNTIL,
  atMs: number,
  nowMs: number,
): void {
  setAttr(element, "datetime", iso);
  element.dataset[kind] = String(atMs);
  setText(element, formatAge(kind === SINCE ? nowMs - atMs : atMs - nowMs));
}

/** Refresh every age and countdown under `root` to `nowMs` (the daemon's clock): no request, only text. */
export function tickTimes(root: ParentNode, nowMs: number): void {
  for (const element of root.querySelectorAll<HTMLElement>("[data-since-ms]"))
    setText(element, formatAge(nowMs - Number(element.dataset[SINCE])));
  for (const element of root.querySelectorAll<HTMLElement>("[data-until-ms]"))
    setText(element, formatAge(Number(element.dataset[UNTIL]) - nowMs));
}

/** The banner: its level as a class, the headline in the live region, the details below it. */
export function renderBanner(
  section: HTMLElement,
  title: HTMLElement,
  details: HTMLElement,
  banner: Banner,
): void {
  setAttr(section, "data-level", banner.level);
  setText(title, banner.title);
  syncList(
    details,
    banner.details,
    (detail) => detail,
    (detail) => h("li", { text: detail }),
    () => undefined,
  );
}

/** The daemon line of the header: version, readiness, upstream. */
export function renderDaemonInfo(element: HTMLElement, status: StatusView | null): void {
  if (status === null) return setText(element, "");
  const upstream = status.upstream.simulator ? "embedded simulator" : status.upstream.url;
  setText(
    element,
    `v${status.version} · ${status.readiness.ready ? "ready" : "starting"} · upstream: ${upstream}`,
  );
}

/** One firing alert: what, since when, value vs threshold, labels, its silences, and the button to silence it. */
function alertItem(alert: AlertPayload, onSilence: (fingerprint: string) => void): HTMLElement {
  const button = h("button", { class: "secondary", text: "Silence…", attrs: { type: "button" } });
  button.addEventListener("click", () => onSilence(alert.fingerprint));
  return h("li", { class: "alert" }, [
    h("div", { class: "alert-head" }, [
      h("span", { class: "badge severity" }),
      h("strong", { class: "rule" }),
      h("span", { class: "summary" }),
    ]),
    h("div", { class: "meta" }, ["firing for ", h("time"), h("span", { class: "value" })]),
    h("div", { class: "labels" }),
    h("div", { class: "silenced-by" }),
    h("div", { class: "caused-by" }),
    button,
  ]);
}

function updateAlertItem(
  item: HTMLElement,
  alert: AlertPayload,
  nowMs: number,
  parent: AlertPayload | undefined,
): void {
  const [head, meta, labels, silencedBy, causedBy, button] = Array.from(item.children) as HTMLElement[];
  setAttr(item, "id", alertAnchor(alert.fingerprint));
  setAttr(item, "data-caused-by", alert.causedBy ?? null);
  const [badge, rule, summary] = Array.from(head?.children ?? []);
  setAttr(item, "data-severity", alert.severity);
  if (badge !== undefined) setText(badge, alert.severity);
  if (rule !== undefined) setText(rule, alert.labels["rule_id"] ?? alert.rule);
  if (summary !== undefined) setText(summary, alert.summary);
  const time = meta?.querySelector("time");
  if (time != null) updateTime(time, alert.startsAt, SINCE, Date.parse(alert.startsAt), nowMs);
  const value = meta?.querySelector(".value");
  const vs = formatValueVsThreshold(alert.rule, alert.value, alert.threshold);
  if (value != null) setText(value, vs === "" ? "" : ` · ${vs}`);
  if (labels !== undefined) setText(labels, formatLabels(alert.labels));
  if (silencedBy !== undefined) renderSilencedBy(silencedBy, alert.silencedBy ?? []);
  if (causedBy !== undefined) renderCausedBy(causedBy, alert.causedBy, parent);
  if (button !== undefined) setAttr(button, "aria-label", `Silence ${alert.rule}: ${alert.summary}`);
}

/** "Silenced by" with a link to each silence in the list. */
function renderSilencedBy(element: HTMLElement, ids: readonly string[]): void {
  setAttr(element, "hidden", ids.length === 0 ? "" : null);
  const key = ids.join(",");
  if (element.dataset["ids"] === key) return;
  element.dataset["ids"] = key;
  element.replaceChildren(
    ...(ids.length === 0 ? [] : ["silenced by "]),
    ...ids.flatMap((id, index) => [
      ...(index > 0 ? [", "] : []),
      h("a", { text: id, attrs: { href: `#${silenceAnchor(id)}` } }),
    ]),
  );
}

/** "Caused by" with a link to the parent's item when it fires (its rule and summary), else its fingerprint. */
function renderCausedBy(
  element: HTMLElement,
  causedBy: string | undefined,
  parent: AlertPayload | undefined,
): void {
  setAttr(element, "hidden", causedBy === undefined ? "" : null);
  const key = causedBy === undefined ? "" : `${causedBy}|${parent?.summary ?? ""}`;
  if (element.dataset["key"] === key) return;
  element.dataset["key"] = key;
  if (causedBy === undefined) return element.replaceChildren();
  const name =
    parent === undefined ? causedBy : `${parent.labels["rule_id"] ?? parent.rule}: ${parent.summary}`;
  element.replaceChildren(
    "caused by ",
    parent === undefined
      ? h("code", { text: name })
      : h("a", { text: name, attrs: { href: `#${alertAnchor(causedBy)}` } }),
  );
}

/** The list of firing alerts (children under their parent, see sortAlerts), and whether it is empty. */
export function renderAlerts(
  list: HTMLElement,
  empty: HTMLElement,
  alerts: readonly AlertPayload[],
  nowMs: number,
  onSilence: (fingerprint: string) => void,
): void {
  setAttr(empty, "hidden", alerts.length === 0 ? null : "");
  const byFingerprint = new Map(alerts.map((alert) => [alert.fingerprint, alert]));
  syncList(
    list,
    alerts,
    (alert) => alert.fingerprint,
    (alert) => alertItem(alert, onSilence),
    (item, alert) =>
      updateAlertItem(
        item,
        alert,
        nowMs,
        alert.causedBy === undefined ? undefined : byFingerprint.get(alert.causedBy),
      ),
  );
}

/** An id usable in a URL fragment for a silence. */
export function silenceAnchor(id: string): string {
  return `silence-${id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** A sparkline of a target's points, labelled for screen readers with its first and last values. */
function updateSparkline(cell: HTMLElement, row: TargetRow): void {
  const d = sparklinePath(row.points);
  let box = cell.querySelector("svg");
  if (box === null) {
    box = svg(
      "svg",
      {
        viewBox: `0 0 ${SPARKLINE_BOX.width} ${SPARKLINE_BOX.height}`,
        width: String(SPARKLINE_BOX.width),
        height: String(SPARKLINE_BOX.height),
        role: "img",
        class: "sparkline",
      },
      [svg("path", { d: "" })],
    ) as SVGSVGElement;
    cell.append(box);
  }
  const first = row.points[0];
  const last = row.points.at(-1);
  setAttr(
    box,
    "aria-label",
    first === undefined || last === undefined
      ? `${row.title}: no recent values`
      : `${row.title}: ${row.points.length} recent values, from ${first.value} to ${last.value}`,
  );
  const path = box.querySelector("path");
  if (path !== null) setAttr(path, "d", d);
}

const STATE_TEXT: Readonly<Record<TargetRow["state"], string>> = {
  upstream_error: "upstream error",
  firing: "firing",
  silenced: "silenced",
  stale: "stale",
  pending: "pending",
  ok: "ok",
};

function targetItem(): HTMLElement {
  const name = h("th", { attrs: { scope: "row" } }, [
    h("span", { class: "title" }),
    h("small", { class: "detail" }),
  ]);
  return h("tr", {}, [
    name,
    h("td", {}, [h("span", { class: "state" })]),
    h("td", { class: "num value" }),
    h("td", { class: "num age" }, [h("time")]),
    h("td", { class: "spark" }),
  ]);
}

function updateTargetItem(item: HTMLElement, row: TargetRow, nowMs: number): void {
  const [name, state, value, age, spark] = Array.from(item.children) as HTMLElement[];
  setText(name?.querySelector(".title") ?? item, row.title);
  setText(name?.querySelector(".detail") ?? item, row.detail);
  const badge = state?.querySelector(".state");
  if (badge != null) {
    setAttr(badge, "data-state", row.state);
    setText(badge, STATE_TEXT[row.state]);
    setAttr(badge, "title", row.problem ?? row.alerts.map((alert) => alert.summary).join("\n"));
  }
  if (value !== undefined) setText(value, row.value);
  const time = age?.querySelector("time");
  if (time != null) {
    if (row.dataAtMs === null) {
      delete time.dataset[SINCE];
      setText(time, "–");
    } else updateTime(time, new Date(row.dataAtMs).toISOString(), SINCE, row.dataAtMs, nowMs);
  }
  if (spark !== undefined) updateSparkline(spark, row);
}

/** The targets table body. */
export function renderTargets(body: HTMLElement, rows: readonly TargetRow[], nowMs: number): void {
  syncList(
    body,
    rows,
    (row) => row.id,
    targetItem,
    (item, row) => updateTargetItem(item, row, nowMs),
  );
}

function silenceItem(silence: Silence, onExpire: (id: string) => void): HTMLElement {
  const button = h("button", { class: "secondary", text: "Expire", attrs: { type: "button" } });
  button.addEventListener("click", () => onExpire(silence.id));
  return h("li", { class: "silence", attrs: { id: silenceAnchor(silence.id) } }, [
    h("div", {}, [h("span", { class: "badge" }), " ", h("code", { class: "matchers" })]),
    h("div", { class: "meta" }),
    button,
  ]);
}

function updateSilenceItem(
  item: HTMLElement,
  silence: Silence,
  nowMs: number,
  busy: ReadonlySet<string>,
): void {
  const [head, meta, button] = Array.from(item.children) as HTMLElement[];
  setAttr(item, "data-state", silence.status.state);
  const badge = head?.querySelector(".badge");
  if (badge != null) setText(badge, silence.status.state);
  const matchers = head?.querySelector(".matchers");
  if (matchers != null) setText(matchers, `{${silence.matchers.map(matcherText).join(", ")}}`);
  if (meta !== undefined) {
    const endsAtMs = Date.parse(silence.endsAt);
    const window = silence.id.startsWith("maintenance:") ? "maintenance window from the config · " : "";
    const when =
      silence.status.state === "expired"
        ? [`ended ${formatClock(silence.endsAt)}`]
        : silence.status.state === "pending"
          ? ["starts in ", timeElement(silence.startsAt, UNTIL, Date.parse(silence.startsAt), nowMs)]
          : ["ends in ", timeElement(silence.endsAt, UNTIL, endsAtMs, nowMs)];
    const key = `${silence.status.state}|${silence.updatedAt}|${silence.endsAt}`;
    if (meta.dataset["key"] !== key) {
      meta.dataset["key"] = key;
      meta.replaceChildren(window, ...when, ` · ${silence.createdBy}: ${silence.comment}`);
    }
  }
  if (button !== undefined) {
    setAttr(button, "hidden", canExpire(silence) ? null : "");
    setAttr(button, "disabled", busy.has(silence.id) ? "" : null);
    setAttr(button, "aria-label", `Expire silence ${silence.id}`);
  }
}

/** The silences list (active, pending, then the latest expired ones). */
export function renderSilences(
  list: HTMLElement,
  empty: HTMLElement,
  silences: readonly Silence[],
  nowMs: number,
  busy: ReadonlySet<string>,
  onExpire: (id: string) => void,
): void {
  setAttr(empty, "hidden", silences.length === 0 ? null : "");
  syncList(
    list,
    silences,
    (silence) => silence.id,
    (silence) => silenceItem(silence, onExpire),
    (item, silence) => updateSilenceItem(item, silence, nowMs, busy),
  );
}

/** The history timeline, newest first; entries never change once drawn. */
export function renderTimeline(list: HTMLElement, events: readonly JournaledEvent[]): void {
  syncList(
    list,
    events,
    (event) => String(event.seq),
    (event) => {
      const { badge, text } = describeEvent(event);
      const at = eventTime(event);
      return h("li", { attrs: { "data-kind": badge } }, [
        h("time", { text: formatClock(at), attrs: { datetime: at } }),
        h("span", { class: "seq", text: `#${event.seq}` }),
        h("span", { class: "badge", text: badge }),
        h("span", { class: "text", text }),
      ]);
    },
    () => undefined,
  );
}
