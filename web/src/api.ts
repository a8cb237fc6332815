// Calls to the operator API (/api/v1) with the token as a bearer header; answers as values, never thrown.
import { apiErrorMessage } from "./decode.js";

/** An API answer: the JSON body, or why there is none (`status` 0: the request did not reach the daemon). */
export type ApiResult =
  | { readonly ok: true; readonly status: number; readonly body: unknown }
  | { readonly ok: false; readonly status: number; readonly message: string };

/** Call `path` under /api/v1 with an optional JSON body. */
export async function callApi(
  method: "GET" | "HEAD" | "POST" | "DELETE",
  path: string,
  token: string | null,
  body?: unknown,
): Promise<ApiResult> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (token !== null) headers["Authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method,
      headers,
      cache: "no-store",
      credentials: "omit",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    return { ok: false, status: 0, message: `the daemon did not answer (${(error as Error).message})` };
  }
  let json: unknown = null;
  if (method !== "HEAD" && response.status !== 204)
    try {
      json = await response.json();
    } catch {
      json = null;
    }
  return response.ok
    ? { ok: true, status: response.status, body: json }
    : { ok: false, status: response.status, message: apiErrorMessage(json, response.status) };
}
