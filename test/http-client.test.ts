// The shared outbound HTTP helper against an in-process server on 127.0.0.1: methods and bodies, caps, deadline, abort.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpClientError, sendHttp, type HttpClient, type Timers } from "../src/http-client.js";
import { createDispatcher } from "../src/upstream/dispatcher.js";

let server: Server;
let base = "";
const dispatcher = createDispatcher({ connections: 4, keepAliveTimeoutMs: 100 });
const client: HttpClient = { dispatcher, maxBodyBytes: 1_000, maxErrorBodyBytes: 100 };

/** Routes: /echo answers the method and body; /big sends `n` bytes with status `s`; /hang never answers. */
function handle(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  let body = "";
  request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
  request.on("end", () => {
    if (url.pathname === "/echo") {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end(`${request.method} ${String(request.headers["x-test"] ?? "")} ${body}`);
    } else if (url.pathname === "/big") {
      response.writeHead(Number(url.searchParams.get("s")), { "retry-after": "7" });
      response.end("x".repeat(Number(url.searchParams.get("n"))));
    }
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("sendHttp", () => {
  it("sends GET, HEAD and POST with headers and body", async () => {
    const headers = { "x-test": "h" };
    const get = await sendHttp(client, { url: `${base}/echo`, headers }, 2_000, undefined);
    expect(get).toEqual({ status: 200, text: "GET h ", truncated: false, retryAfter: undefined });
    const post = await sendHttp(
      client,
      { url: `${base}/echo`, method: "POST", headers, body: "{}" },
      2_000,
      undefined,
    );
    expect(post.text).toBe("POST h {}");
    const head = await sendHttp(client, { url: `${base}/echo`, method: "HEAD", headers }, 2_000, undefined);
    expect(head).toMatchObject({ status: 200, text: "" });
  });

  it.each([
    { name: "a 2xx body within its cap", status: 200, bytes: 1_000, truncated: false },
    { name: "a 2xx body past its cap", status: 200, bytes: 100_000, truncated: true },
    { name: "an error body within the error cap", status: 503, bytes: 100, truncated: false },
    { name: "an error body past the error cap", status: 503, bytes: 1_000, truncated: true },
  ])("$name: truncated $truncated", async ({ status, bytes, truncated }) => {
    const progress = { status: null as number | null };
    const response = await sendHttp(
      client,
      { url: `${base}/big?s=${status}&n=${bytes}`, headers: {} },
      2_000,
      undefined,
      progress,
    );
    expect(response).toMatchObject({ status, truncated });
    expect(response.text.length).toBeLessThanOrEqual(status === 200 ? 1_000 : 100);
    expect(progress.status).toBe(status);
    if (status !== 200) expect(response.retryAfter).toBe("7");
  });

  it("rejects with PM_HTTP_TIMEOUT when its (injected) deadline fires", async () => {
    const fire: (() => void)[] = [];
    const timers: Timers = { setTimer: (callback) => fire.push(callback), clearTimer: () => undefined };
    const pending = sendHttp({ ...client, timers }, { url: `${base}/hang`, headers: {} }, 5, undefined);
    fire[0]!();
    await expect(pending).rejects.toMatchObject({ name: "HttpClientError", code: "PM_HTTP_TIMEOUT" });
  });

  it("rejects with PM_HTTP_ABORTED when the caller's signal fires, or had fired", async () => {
    const controller = new AbortController();
    const pending = sendHttp(client, { url: `${base}/hang`, headers: {} }, 2_000, controller.signal);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(HttpClientError);
    await expect(pending).rejects.toMatchObject({ code: "PM_HTTP_ABORTED" });
    const again = sendHttp(client, { url: `${base}/echo`, headers: {} }, 2_000, controller.signal);
    await expect(again).rejects.toMatchObject({ code: "PM_HTTP_ABORTED" });
  });
});
