// Serves API routes through the real router on 127.0.0.1:0 for contract tests: fetch, token, shutdown.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAccessPolicy } from "../../../src/http/access.js";
import type { AnyApiRoute } from "../../../src/http/api/route.js";
import { createApiRouter } from "../../../src/http/api/router.js";

/** A router on a real socket; `token` is read per request like server.token. */
export interface ServedApi {
  /** http://127.0.0.1:PORT/api/v1 */
  readonly base: string;
  token: string;
  /** GET `path` (under /api/v1); the parsed JSON body and status. */
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

/** Start the router over `routes`. */
export async function serveApi(routes: readonly AnyApiRoute[]): Promise<ServedApi> {
  const state = { token: "" };
  const handler = createApiRouter({
    routes,
    access: createAccessPolicy({ host: "127.0.0.1", allowedHosts: [], allowedOrigins: [] }),
    token: () => state.token,
  });
  const server: Server = createServer((request, response) => {
    void handler(request, response, new URL(request.url ?? "/", "http://localhost"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  return {
    base,
    get token() {
      return state.token;
    },
    set token(value: string) {
      state.token = value;
    },
    async get(path, headers = {}) {
      const response = await fetch(`${base}${path}`, { headers });
      return { status: response.status, body: await response.json() };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
