// The OpenAPI 3.1 document, generated from the same schemas the routes validate with. The
// reference page that renders it is in edge/routes/site.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";
import { publicRate } from "../../middleware/auth.ts";

export const OPENAPI_PATH = "/v1/openapi.json";

export function mountDocs(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "Authorization: Bearer stills_live_…",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
  });
  app.use(OPENAPI_PATH, publicRate);
  app.doc31(OPENAPI_PATH, (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Stills API",
      version: "1.0.0",
      description: "Turn a video link into still frames.",
    },
    servers: [{ url: c.env.PUBLIC_BASE_URL || new URL(c.req.url).origin }],
  }));
}
