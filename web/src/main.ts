// Entry of the status page: finds the skeleton's elements, wires the controls, connects, and draws state changes.
import { connect, createContext, createSilence, daemonNowMs, expireSilence, type AppContext } from "./app.js";
import { decideBanner } from "./banner.js";
import { setupSilenceDialog, rememberedAuthor } from "./dialog.js";
import { byId, setAttr, setText } from "./dom.js";
import { DEFAULT_DURATION, draftFromAlert, matchableNames, sortSilences } from "./silence-form.js";
import { targetRows } from "./targets.js";
import { loadToken, saveToken } from "./token.js";
import { setupTheme } from "./theme.js";
import {
  renderAlerts,
  renderBanner,
  renderDaemonInfo,
  renderSilences,
  renderTargets,
  renderTimeline,
  tickTimes,
} from "./views.js";
import { sortAlerts } from "./alert-order.js";

/** Redraws at most this often: a burst of ticks costs one render. */
const RENDER_EVERY_MS = 250;
/** Expired silences listed below the active and pending ones. */
const EXPIRED_SHOWN = 10;

/** The skeleton's elements (index.html). */
function elements() {
  return {
    banner: byId("banner", HTMLElement),
    bannerTitle: byId("banner-title", HTMLElement),
    bannerDetails: byId("banner-details", HTMLElement),
    info: byId("daemon-info", HTMLElement),
    alerts: byId("alerts", HTMLElement),
    alertsEmpty: byId("alerts-empty", HTMLElement),
    targets: byId("targets", HTMLElement),
    targetsNote: byId("targets-note", HTMLElement),
    silences: byId("silences", HTMLElement),
    silencesEmpty: byId("silences-empty", HTMLElement),
    silencesError: byId("silences-error", HTMLElement),
    timeline: byId("timeline", HTMLElement),
    historyNote: byId("history-note", HTMLElement),
    tokenForm: byId("token-form", HTMLFormElement),
    tokenInput: byId("token-input", HTMLInputElement),
    tokenError: byId("token-error", HTMLElement),
  };
}
type Elements = ReturnType<typeof elements>;

/** A note paragraph: shown with `text`, hidden when it is null. */
function note(element: HTMLElement, text: string | null): void {
  setAttr(element, "hidden", text === null ? "" : null);
  setText(element, text ?? "");
}

/** Draw the whole page from the context (every section is kept in place by key, so this is cheap when idle). */
function draw(
  ctx: AppContext,
  el: Elements,
  onSilence: (fp: string) => void,
  onExpire: (id: string) => void,
): void {
  const { page } = ctx.session;
  const now = daemonNowMs(ctx);
  const alerts = sortAlerts(page.alerts.values());
  const banner = decideBanner({
    connection: page.connection,
    alerts,
    sinks: page.status?.sinks ?? null,
    readiness: page.status?.readiness ?? null,
  });
  renderBanner(el.banner, el.bannerTitle, el.bannerDetails, banner);
  renderDaemonInfo(el.info, page.status);
  renderAlerts(el.alerts, el.alertsEmpty, alerts, now, onSilence);
  renderTargets(el.targets, targetRows(page, now), now);
  note(
    el.targetsNote,
    page.readErrors.targets === undefined ? null : `Targets could not be read: ${page.readErrors.targets}`,
  );
  const silences = sortSilences(page.silences ?? []);
  const shown = [
    ...silences.filter((s) => s.status.state !== "expired"),
    ...silences.filter((s) => s.status.state === "expired").slice(0, EXPIRED_SHOWN),
  ];
  renderSilences(el.silences, el.silencesEmpty, shown, now, ctx.expiring, onExpire);
  if (page.readErrors.silences !== undefined)
    setText(el.silencesError, `Silences could not be read: ${page.readErrors.silences}`);
  renderTimeline(el.timeline, page.timeline);
  note(
    el.historyNote,
    page.historyFrom === null
      ? null
      : `The journal holds events from #${page.historyFrom}; older ones are gone.`,
  );
}

/** A render function that draws at most every RENDER_EVERY_MS. */
function throttled(drawNow: () => void): () => void {
  let timer: number | undefined;
  let lastMs = -Infinity;
  return () => {
    if (timer !== undefined) return;
    const waitMs = Math.max(0, lastMs + RENDER_EVERY_MS - performance.now());
    timer = window.setTimeout(() => {
      timer = undefined;
      lastMs = performance.now();
      drawNow();
    }, waitMs);
  };
}

/** Token prompt: shown when the daemon asks for a token; a submitted one is kept for the tab and used at once. */
function wireTokenForm(ctx: AppContext, el: Elements): (message: string) => void {
  // a link with #token=... opened in a tab that already shows the page: take it and reconnect
  window.addEventListener("hashchange", () => {
    const token = loadToken();
    if (token === null || token === ctx.token) return;
    ctx.token = token;
    el.tokenForm.hidden = true;
    connect(ctx);
  });
  el.tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const token = el.tokenInput.value.trim();
    if (token === "") return;
    saveToken(token);
    ctx.token = token;
    el.tokenForm.hidden = true;
    connect(ctx);
  });
  return (message) => {
    el.tokenForm.hidden = false;
    setText(el.tokenError, message);
    el.tokenInput.focus();
  };
}

/** Start the page. */
function main(): void {
  const el = elements();
  setupTheme(byId("theme-toggle", HTMLButtonElement));
  let render = (): void => undefined;
  let askToken = (_message: string): void => undefined;
  const ctx = createContext(
    loadToken(),
    () => render(),
    (message) => askToken(message),
  );
  askToken = wireTokenForm(ctx, el);
  const openDialog = setupSilenceDialog(
    (silence) => createSilence(ctx, silence),
    () => daemonNowMs(ctx),
  );
  const onSilence = (fingerprint: string): void => {
    const alert = ctx.session.page.alerts.get(fingerprint);
    if (alert === undefined) return;
    openDialog(
      draftFromAlert(alert, rememberedAuthor()),
      `For ${alert.rule}: ${alert.summary}`,
      matchableNames(alert),
    );
  };
  const onExpire = (id: string): void => {
    setText(el.silencesError, "");
    void expireSilence(ctx, id).then((error) => {
      if (error !== null) setText(el.silencesError, error);
      byId("silences-heading", HTMLElement).focus();
    });
  };
  byId("new-silence", HTMLButtonElement).addEventListener("click", () => {
    const names = [
      ...new Set([...ctx.session.page.alerts.values()].flatMap((alert) => matchableNames(alert))),
    ].sort();
    const draft = {
      matchers: [{ name: "", operator: "=" as const, value: "" }],
      duration: DEFAULT_DURATION,
      createdBy: rememberedAuthor(),
      comment: "",
    };
    openDialog(
      draft,
      "Alerts whose labels match every matcher are not notified while it is active.",
      names.length > 0 ? names : ["rule", "severity", "pair"],
    );
  });
  render = throttled(() => draw(ctx, el, onSilence, onExpire));
  // ages and countdowns move every second with no request; states that depend on time (stale) follow
  window.setInterval(() => {
    tickTimes(document, daemonNowMs(ctx));
    render();
  }, 1_000);
  connect(ctx);
}

main();
