// The operator API's routes, assembled from each area's file, and the OpenAPI route that documents them all.
import { z } from "zod";
import { alertsHistoryRoute, type HistoryDeps } from "./alerts-history.js";
import { alertsRoute } from "./alerts.js";
import { openApiDocument } from "./openapi.js";
import { defineRoute, type AnyApiRoute } from "./route.js";
import { silenceRoutes, type SilenceApiDeps } from "./silences.js";
import { statusRoute, type StatusDeps } from "./status.js";
import { targetsRoute, type TargetsDeps } from "./targets.js";

/** What the API's routes read from the running daemon; each area adds the parts it needs. */
export interface ApiDeps extends StatusDeps, HistoryDeps, TargetsDeps, SilenceApiDeps {}

/** Every route of the API, the OpenAPI document's own included. */
export function apiRoutes(deps: ApiDeps): readonly AnyApiRoute[] {
  const routes: AnyApiRoute[] = [
    alertsRoute(deps),
    alertsHistoryRoute(deps),
    targetsRoute(deps),
    statusRoute(deps),
  ];
  const openapi = defineRoute({
    method: "GET",
    path: "/openapi.json",
    summary: "This API's OpenAPI 3.1 document, generated from the schemas the handlers validate with.",
    tag: "meta",
    responses: { 200: { description: "the OpenAPI document", schema: z.record(z.string(), z.unknown()) } },
    handle: () => ({ status: 200, body: openApiDocument(routes, deps.version) }),
  });
  routes.push(openapi, ...silenceRoutes(deps));
  return routes;
}
