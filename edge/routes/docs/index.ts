// The OpenAPI 3.1 document, generated from the same schemas the routes validate with and
// served by the API router itself: its server URL ends in /v1 and its paths are relative to
// it, as the spec's {base_url} and paths are. The reference page that renders it is in
// edge/routes/site.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { publicBaseUrl } from "../../config.ts";
import type { AppEnv } from "../../context.ts";
import { publicRate } from "../../middleware/auth.ts";

export const API_BASE_PATH = "/v1";
/** Where the document is served, relative to the API's base path. */
export const DOCUMENT_PATH = "/openapi.json";
export const OPENAPI_PATH = `${API_BASE_PATH}${DOCUMENT_PATH}`;

/** Registers the security schemes and serves the document of `api` (mounted at /v1). */
export function describeApi(api: OpenAPIHono<AppEnv>) {
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "Authorization: Bearer stills_live_…",
  });
  api.openAPIRegistry.registerComponent("securitySchemes", "apiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
  });
  api.use(DOCUMENT_PATH, publicRate);
  api.doc31(DOCUMENT_PATH, (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Stills API",
      version: "1.0.0",
      description: "Turn a video link into still frames.",
      // The service is ours; clients generated from this document may be used freely with it.
      license: { name: "Proprietary", identifier: "LicenseRef-Stills-API-Terms" },
    },
    servers: [
      {
        url: `${publicBaseUrl(c.env, c.req.url)}${API_BASE_PATH}`,
        description: "The API's base URL ({base_url} in the spec)",
      },
    ],
  }));
}
