import type { Context } from "hono";
import { publicBaseUrl } from "../../config.ts";
import type { AppEnv } from "../../context.ts";
import { API_BASE_PATH } from "./routes.ts";

/** The document's own fields; the paths come from the routes registered on the API router. */
export function documentConfig(c: Context<AppEnv>) {
  return {
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
  };
}
