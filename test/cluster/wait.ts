// Waiting in the real-process cluster suites: a plain sleep, and polling a condition until a deadline.
/** Resolve after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `done` every 50 ms; throw naming `what` when it is still false after `timeoutMs`. */
export async function waitUntil(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}
