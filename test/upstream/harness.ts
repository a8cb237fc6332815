// Builds a client against a test server with a short keep-alive pool and injected sleep/random (no real backoff waits).
import type { Dispatcher } from "undici";
import { createDispatcher, createPragmaClient, type PragmaClientOptions } from "../../src/upstream/client.js";
import type { PragmaClient, RequestObserver } from "../../src/upstream/types.js";

/** A client plus what its injected dependencies recorded. */
export interface Harness {
  readonly client: PragmaClient;
  readonly dispatcher: Dispatcher;
  /** Delays the client asked to sleep, in ms. */
  readonly sleepsMs: number[];
  readonly samples: Parameters<RequestObserver>[0][];
  close(): Promise<void>;
}

/** Create a client on `baseUrl`; retry defaults: 3 attempts, 100 ms base, 1 s cap, 10 s budget. */
export function createHarness(baseUrl: string, overrides: Partial<PragmaClientOptions> = {}): Harness {
  const dispatcher = createDispatcher({ connections: 4, keepAliveTimeoutMs: 100 });
  const sleepsMs: number[] = [];
  const samples: Parameters<RequestObserver>[0][] = [];
  let virtualNowMs = 0;
  const client = createPragmaClient({
    baseUrl,
    vaultBaseUrl: `${baseUrl}/vault`,
    dispatcher,
    timeoutMs: 2_000,
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000, maxElapsedMs: 10_000 },
    random: () => 0.5,
    // Virtual time: sleeping advances the clock instantly, so budgets are testable without waiting.
    sleep: (ms) => {
      sleepsMs.push(ms);
      virtualNowMs += ms;
      return Promise.resolve();
    },
    nowMs: () => virtualNowMs,
    observer: (sample) => samples.push(sample),
    ...overrides,
  });
  return { client, dispatcher, sleepsMs, samples, close: () => dispatcher.close() };
}
