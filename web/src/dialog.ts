// The "new silence" dialog: matchers (prefilled from an alert, editable), duration, author and comment; a modal
// <dialog>, so the keyboard stays inside it, Escape closes it and focus returns to the button that opened it.
import { byId, h, setAttr, setText } from "./dom.js";
import {
  DURATION_CHOICES,
  OPERATORS,
  silenceFromDraft,
  type MatcherDraft,
  type Operator,
  type Problem,
  type SilenceDraft,
} from "./silence-form.js";
import type { NewSilence } from "./types.js";

/** Sends the silence; resolves with an error message to show, or null when it was created. */
export type SubmitSilence = (silence: NewSilence) => Promise<string | null>;

const AUTHOR_KEY = "pragma-monitor.author";

/** The author typed last time (localStorage: it is not a secret), or "". */
export function rememberedAuthor(): string {
  try {
    return window.localStorage.getItem(AUTHOR_KEY) ?? "";
  } catch {
    return "";
  }
}

function rememberAuthor(author: string): void {
  try {
    window.localStorage.setItem(AUTHOR_KEY, author);
  } catch {
    // not remembered: the field is simply empty next time
  }
}

let rowCounter = 0;

/** One matcher row: name, operator, value (each with its own label) and a remove button. */
function matcherRow(draft: MatcherDraft, onRemove: (row: HTMLElement) => void): HTMLElement {
  const n = ++rowCounter;
  const field = (label: string, control: HTMLElement): HTMLElement => {
    control.id = `matcher-${n}-${label.toLowerCase()}`;
    return h("div", { class: "field" }, [h("label", { text: label, attrs: { for: control.id } }), control]);
  };
  const name = h("input", {
    class: "m-name",
    attrs: { list: "label-names", autocomplete: "off", spellcheck: "false" },
  });
  name.value = draft.name;
  const operator = h(
    "select",
    { class: "m-operator" },
    OPERATORS.map((op) => h("option", { text: op, attrs: { value: op } })),
  );
  operator.value = draft.operator;
  const value = h("input", { class: "m-value", attrs: { autocomplete: "off", spellcheck: "false" } });
  value.value = draft.value;
  const row = h("div", { class: "matcher-row" });
  const remove = h("button", {
    class: "secondary icon",
    text: "×",
    attrs: { type: "button", "aria-label": `Remove matcher ${draft.name || "row"}` },
  });
  remove.addEventListener("click", () => onRemove(row));
  row.append(field("Name", name), field("Operator", operator), field("Value", value), remove);
  return row;
}

/** The form's current content as a draft. */
function readDraft(form: HTMLFormElement): SilenceDraft {
  const rows = Array.from(form.querySelectorAll<HTMLElement>(".matcher-row"));
  return {
    matchers: rows.map((row) => ({
      name: row.querySelector<HTMLInputElement>(".m-name")?.value ?? "",
      operator: (row.querySelector<HTMLSelectElement>(".m-operator")?.value ?? "=") as Operator,
      value: row.querySelector<HTMLInputElement>(".m-value")?.value ?? "",
    })),
    duration: byId("silence-duration", HTMLInputElement).value,
    createdBy: byId("silence-author", HTMLInputElement).value,
    comment: byId("silence-comment", HTMLTextAreaElement).value,
  };
}

/** The control a problem's field names ("matchers.2.value" → the third row's value input). */
function controlOf(form: HTMLFormElement, field: string): HTMLElement | null {
  const [head, index, part] = field.split(".");
  if (head === "matchers" && index !== undefined && part !== undefined) {
    const row = form.querySelectorAll<HTMLElement>(".matcher-row").item(Number(index)) as HTMLElement | null;
    return row?.querySelector<HTMLElement>(`.m-${part}`) ?? null;
  }
  const ids: Readonly<Record<string, string>> = {
    duration: "silence-duration",
    createdBy: "silence-author",
    comment: "silence-comment",
    matchers: "add-matcher",
  };
  const id = ids[field];
  return id === undefined ? null : document.getElementById(id);
}

/** Mark the fields with problems (aria-invalid), say what is wrong, and move focus to the first one. */
function showProblems(form: HTMLFormElement, problems: readonly Problem[]): void {
  for (const element of form.querySelectorAll("[aria-invalid]")) element.removeAttribute("aria-invalid");
  const error = byId("silence-error", HTMLElement);
  setText(error, problems.map((problem) => problem.message).join(". "));
  for (const problem of problems) controlOf(form, problem.field)?.setAttribute("aria-invalid", "true");
  controlOf(form, problems[0]?.field ?? "")?.focus();
}

/** Wire the dialog once; returns the function that opens it with a draft (and a line saying what it silences). */
export function setupSilenceDialog(
  submit: SubmitSilence,
  daemonNowMs: () => number,
): (draft: SilenceDraft, about: string, names: readonly string[]) => void {
  const dialog = byId("silence-dialog", HTMLDialogElement);
  const form = byId("silence-form", HTMLFormElement);
  const rows = byId("matcher-rows", HTMLElement);
  const names = byId("label-names", HTMLDataListElement);
  byId("duration-choices", HTMLDataListElement).replaceChildren(
    ...DURATION_CHOICES.map((choice) => h("option", { attrs: { value: choice } })),
  );
  let opener: Element | null = null;
  const removeRow = (row: HTMLElement): void => {
    const next = row.nextElementSibling ?? row.previousElementSibling;
    row.remove();
    (next?.querySelector("input") ?? byId("add-matcher", HTMLButtonElement)).focus();
  };
  byId("add-matcher", HTMLButtonElement).addEventListener("click", () => {
    const row = matcherRow({ name: "", operator: "=", value: "" }, removeRow);
    rows.append(row);
    row.querySelector("input")?.focus();
  });
  byId("silence-cancel", HTMLButtonElement).addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void onSubmit(form, dialog, submit, daemonNowMs());
  });
  return (draft, about, labelNames) => {
    opener = document.activeElement;
    setText(byId("silence-about", HTMLElement), about);
    names.replaceChildren(...labelNames.map((name) => h("option", { attrs: { value: name } })));
    rows.replaceChildren(...draft.matchers.map((matcher) => matcherRow(matcher, removeRow)));
    byId("silence-duration", HTMLInputElement).value = draft.duration;
    byId("silence-author", HTMLInputElement).value = draft.createdBy;
    byId("silence-comment", HTMLTextAreaElement).value = draft.comment;
    showProblems(form, []);
    dialog.showModal();
    // the comment is what an operator has to type; the prefilled matchers are usually right
    byId(draft.createdBy === "" ? "silence-author" : "silence-comment", HTMLElement).focus();
  };
}

/** Check the form, send it, and close on success (or say why not). */
async function onSubmit(
  form: HTMLFormElement,
  dialog: HTMLDialogElement,
  submit: SubmitSilence,
  nowMs: number,
): Promise<void> {
  const draft = readDraft(form);
  // starts now on the daemon's clock, so a browser clock ahead or behind does not make it pending or short
  const checked = silenceFromDraft(draft, nowMs);
  if (!checked.ok) return showProblems(form, checked.problems);
  const button = byId("silence-submit", HTMLButtonElement);
  setAttr(button, "disabled", "");
  const error = await submit(checked.silence);
  button.removeAttribute("disabled");
  // the daemon's refusal is read out by the error line (role=alert); focus stays where it was
  if (error !== null) return showProblems(form, [{ field: "form", message: error }]);
  rememberAuthor(checked.silence.createdBy);
  dialog.close();
}
