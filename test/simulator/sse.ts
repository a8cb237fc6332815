// Test helper: read a Server-Sent Events response of the simulator (eventsource-parser over undici) event by event.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { request } from "undici";
import { testAgent } from "./helpers.js";

/** An open SSE response: its status and content type, what arrived so far, and waits on what comes next. */
export interface SseReader {
  readonly status: number;
  readonly contentType: string;
  readonly events: EventSourceMessage[];
  readonly comments: string[];
  /** Resolves when the server ended or cut the response. */
  readonly ended: Promise<void>;
  /** The `index`-th event (0-based), waiting up to `timeoutMs` for it. */
  event(index: number, timeoutMs?: number): Promise<EventSourceMessage>;
  close(): void;
}

/** GET `url` and read it as an event stream (non-200 answers are read whole into `text`). */
export async function openSse(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseReader & { readonly text: () => Promise<string> }> {
  const controller = new AbortController();
  const response = await request(url, {
    headers: { accept: "text/event-stream", ...headers },
    dispatcher: testAgent,
    signal: controller.signal,
  });
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  let wake: () => void = () => undefined;
  const parser = createParser({
    onEvent: (event) => {
      events.push(event);
      wake();
    },
    onComment: (comment) => comments.push(comment),
  });
  const contentType = String(response.headers["content-type"] ?? "");
  const streaming = response.statusCode === 200 && contentType.startsWith("text/event-stream");
  const ended = new Promise<void>((resolve) => {
    response.body.on("close", resolve);
    response.body.on("error", () => resolve());
  });
  if (streaming) {
    const decoder = new TextDecoder();
    response.body.on("data", (chunk: Buffer) => parser.feed(decoder.decode(chunk, { stream: true })));
  }
  return {
    status: response.statusCode,
    contentType,
    events,
    comments,
    ended,
    text: () => response.body.text(),
    async event(index, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length <= index) {
        const remainingMs = deadline - Date.now();
        if (remainingMs <= 0) throw new Error(`no event #${index} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(remainingMs, 50));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return events[index]!;
    },
    close: () => controller.abort(),
  };
}

/** Wait `ms` of real time (the stream runs on real timers). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
