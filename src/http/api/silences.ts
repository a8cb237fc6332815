// The silence routes: Alertmanager API v2's bodies under /api/v1/silences, so people and tools that know it need nothing new.
import { z } from "zod";
import type { Silencer } from "../../pipeline/silencer.js";
import { SILENCE, SILENCE_MATCHER } from "../../state/silence-file.js";
import { defineRoute, type AnyApiRoute, type ApiResponse } from "./route.js";
import { refusal } from "./router.js";

/** What the silence routes read and change. */
export interface SilenceApiDeps {
  readonly silencer: Silencer;
}

/** A listed silence: the stored fields and its state now. */
const GETTABLE_SILENCE = SILENCE.extend({
  status: z.object({ state: z.enum(["active", "pending", "expired"]) }),
}).describe("a silence; maintenance windows from the config list with ids maintenance:<name>");

/** Alertmanager's postable silence: `id` updates an existing one. */
const POSTABLE_SILENCE = z.object({
  id: z.string().min(1).max(128).optional().describe("update this silence instead of creating one"),
  matchers: z
    .array(SILENCE_MATCHER)
    .min(1)
    .max(32)
    .describe("all must hold; label names: the alert's labels plus rule and severity"),
  startsAt: z.iso.datetime({ offset: true }).describe("a start in the past means now"),
  endsAt: z.iso.datetime({ offset: true }),
  createdBy: z.string().min(1).max(256),
  comment: z.string().min(1).max(4_096),
});

const ID_PARAM = "id";

/** The four silence routes. */
export function silenceRoutes(deps: SilenceApiDeps): readonly AnyApiRoute[] {
  const { silencer } = deps;
  const errors = {
    400: { description: "invalid matchers or times" },
    401: { description: "a token is required" },
    503: { description: "the silences file could not be written in state.dir: nothing changed" },
  };
  return [
    defineRoute({
      method: "GET",
      path: "/silences",
      summary: "Every silence and maintenance window: active, then pending, then expired (kept 120 h).",
      tag: "silences",
      responses: {
        200: { description: "the silences", schema: z.array(GETTABLE_SILENCE) },
        401: errors[401],
      },
      handle: () => ({ status: 200, body: silencer.list() }),
    }),
    defineRoute({
      method: "POST",
      path: "/silences",
      summary: "Create a silence (or update the one `id` names); answers its id.",
      tag: "silences",
      body: POSTABLE_SILENCE,
      responses: {
        200: { description: "saved", schema: z.object({ silenceID: z.string() }) },
        ...errors,
        403: { description: "a write from another origin" },
        404: { description: "`id` names no silence" },
        409: { description: "`id` names a maintenance window" },
        429: { description: "too many live silences" },
      },
      handle: ({ body }) => {
        const { id, ...rest } = body;
        const change = silencer.put(id === undefined ? rest : { ...rest, id });
        return answer(change, () => ({ silenceID: "silence" in change ? change.silence.id : "" }));
      },
    }),
    defineRoute({
      method: "GET",
      path: `/silences/{${ID_PARAM}}`,
      summary: "One silence or maintenance window.",
      tag: "silences",
      responses: {
        200: { description: "the silence", schema: GETTABLE_SILENCE },
        401: errors[401],
        404: { description: "no such silence" },
      },
      handle: ({ params }) => {
        const id = params[ID_PARAM] ?? "";
        const silence = silencer.get(id);
        return silence === undefined
          ? refusal(404, "not_found", `no silence ${id}`)
          : { status: 200, body: silence };
      },
    }),
    defineRoute({
      method: "DELETE",
      path: `/silences/{${ID_PARAM}}`,
      summary: "Expire a silence now (it stays listed as expired).",
      tag: "silences",
      responses: {
        200: { description: "expired", schema: z.object({}) },
        401: errors[401],
        403: { description: "a write from another origin" },
        404: { description: "no such silence" },
        409: { description: "already expired, or a maintenance window" },
        503: errors[503],
      },
      handle: ({ params }) => answer(silencer.expire(params[ID_PARAM] ?? ""), () => ({})),
    }),
  ];
}

/** 200 with `body()` for a change that went through, else the refusal in the API's error shape. */
function answer(
  change: ReturnType<Silencer["put"]>,
  body: () => Readonly<Record<string, unknown>>,
): ApiResponse {
  if ("silences" in change) return { status: 200, body: body() };
  // the set says "endsAt: ..." where the router's own 400s say "body.endsAt: ...": one form for clients
  const message = change.status === 400 ? `body.${change.message}` : change.message;
  return refusal(change.status, change.error, message);
}
