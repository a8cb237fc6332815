// vi.waitFor with room for a loaded machine: its 1 s default fails now and then while the whole suite shares 2 cores.
import { vi } from "vitest";

/** How long a wait may take by default (ms): a condition that is met at all is met well within it. */
const WAIT_TIMEOUT_MS = 10_000;

/** Retry `callback` until it stops throwing (vi.waitFor), for up to 10 s unless `options` say otherwise. */
export function waitFor<T>(
  callback: () => T | Promise<T>,
  options: { readonly timeout?: number; readonly interval?: number } = {},
): Promise<T> {
  return vi.waitFor(callback, { timeout: WAIT_TIMEOUT_MS, ...options });
}
