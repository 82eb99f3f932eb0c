// The OpenAPI 3.1 document, generated from the same schemas the routes validate with and
// served by the API router itself: its server URL ends in /v1 and its paths are relative to
// it, as the spec's {base_url} and paths are. The reference page that renders it is in
// edge/routes/site.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../context.ts";
import { publicRate } from "../../middleware/auth.ts";
import { documentConfig, servedDocument } from "./handlers.ts";
import { DOCUMENT_PATH, SECURITY_SCHEMES } from "./routes.ts";

export { API_BASE_PATH, DOCUMENT_PATH, OPENAPI_PATH } from "./routes.ts";

/** Registers the security schemes and serves the document of `api` (mounted at /v1). */
export function describeApi(api: OpenAPIHono<AppEnv>) {
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) {
    api.openAPIRegistry.registerComponent("securitySchemes", name, scheme);
  }
  api.use(DOCUMENT_PATH, publicRate);
  api.get(DOCUMENT_PATH, (c) => c.json(documentOf(api, c)));
}

/** The document of `api` as served to this request (its origin written in). */
export function documentOf(api: OpenAPIHono<AppEnv>, c: Context<AppEnv>) {
  return servedDocument(api.getOpenAPI31Document(documentConfig(c)), c);
}
