// Small DOM helpers: build elements (text only, never HTML strings), find them, and keep keyed lists in place.

/** What `h` sets on a new element. */
export interface ElementProps {
  readonly class?: string;
  readonly text?: string;
  readonly attrs?: Readonly<Record<string, string>>;
}

/** A new HTML element with a class, text content and attributes, and the given children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps = {},
  children: readonly (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class !== undefined) element.className = props.class;
  if (props.text !== undefined) element.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** A new SVG element with attributes (inline SVG: no request, allowed by the page's policy). */
export function svg(
  tag: string,
  attrs: Readonly<Record<string, string>>,
  children: readonly Node[] = [],
): SVGElement {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** The element with `id`, checked to be of `type` (the page's skeleton is fixed: a missing one is a bug). */
export function byId<T extends Element>(id: string, type: abstract new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`#${id} is missing or not a ${type.name}`);
  return element;
}

/** Set text only when it changed (a live region announces every change; layout is spared too). */
export function setText(element: Element, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}

/** Set or remove an attribute only when it changed. */
export function setAttr(element: Element, name: string, value: string | null): void {
  if (value === null) element.removeAttribute(name);
  else if (element.getAttribute(name) !== value) element.setAttribute(name, value);
}

/**
 * Make `container`'s children one element per item, in order, keyed by `key`: an item seen before keeps its
 * element (updated in place), so focus, a pressed button and screen reader position survive every update.
 */
export function syncList<T>(
  container: Element,
  items: readonly T[],
  key: (item: T) => string,
  create: (item: T) => HTMLElement,
  update: (element: HTMLElement, item: T) => void,
): void {
  const existing = new Map<string, HTMLElement>();
  for (const child of Array.from(container.children))
    if (child instanceof HTMLElement && child.dataset["key"] !== undefined)
      existing.set(child.dataset["key"], child);
  let index = 0;
  for (const item of items) {
    const k = key(item);
    let element = existing.get(k);
    if (element === undefined) {
      element = create(item);
      element.dataset["key"] = k;
    } else existing.delete(k);
    update(element, item);
    const at = container.children[index];
    if (at !== element) container.insertBefore(element, at ?? null);
    index += 1;
  }
  for (const stale of existing.values()) stale.remove();
}
