// The public API, spec §4: every resource router, under the spec's base path /v1. The routes
// and the OpenAPI document are relative to /v1, so a client generated from the document and
// pointed at {base_url} calls the same URLs as before.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createRouter, routeNotFound } from "../app.ts";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";
import { enforceIpRate } from "../middleware/rate-limit.ts";
import { batchesRouter } from "./batches/index.ts";
import { demoRouter } from "./demo/index.ts";
import { API_BASE_PATH, DOCUMENT_PATH, describeApi, documentOf } from "./docs/index.ts";
import { jobsRouter } from "./jobs/index.ts";
import { pricingRouter } from "./pricing/index.ts";
import { usageRouter } from "./usage/index.ts";
import { webhookDeliveriesRouter } from "./webhook-deliveries/index.ts";

const api = createRouter()
  .route("/", jobsRouter)
  .route("/", batchesRouter)
  .route("/", usageRouter)
  .route("/", pricingRouter)
  .route("/", demoRouter)
  .route("/", webhookDeliveriesRouter);
describeApi(api);

/** The API's OpenAPI document as served to this request, for the pages written from it. */
export function apiDocument(c: Context<AppEnv>) {
  return documentOf(api, c);
}

/** Each documented path as a pattern, with the methods it answers (HEAD wherever GET is). */
function methodsByPath(router: OpenAPIHono<AppEnv>) {
  const table = new Map<string, Set<string>>();
  const add = (path: string, method: string) => {
    const methods = table.get(path) ?? new Set<string>();
    methods.add(method.toUpperCase());
    if (method.toUpperCase() === "GET") methods.add("HEAD");
    table.set(path, methods);
  };
  for (const definition of router.openAPIRegistry.definitions) {
    if (definition.type === "route") add(definition.route.path, definition.route.method);
  }
  add(DOCUMENT_PATH, "get");
  return [...table].map(([path, methods]) => ({
    pattern: new RegExp(`^${API_BASE_PATH}${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    allow: [...methods].sort(),
  }));
}

const ROUTES = methodsByPath(api);

// Whatever no route answered: a known path called with another method is 405 with Allow (it
// used to read as a missing job), anything else 404 NotFound. Both are counted per address.
api.all("*", async (c) => {
  await enforceIpRate(c);
  const known = ROUTES.find((route) => route.pattern.test(c.req.path));
  if (!known) throw routeNotFound(c.req.method, c.req.path);
  if (c.req.method === "OPTIONS") {
    c.header("Allow", known.allow.join(", "));
    return c.body(null, 204);
  }
  throw new ApiError(
    "MethodNotAllowed",
    `${c.req.method} is not allowed on ${c.req.path}; it answers ${known.allow.join(", ")}`,
    { userMessage: "This address does not accept that kind of request.", allow: known.allow },
  );
});

export const v1Router = createRouter().route(API_BASE_PATH, api);
