import type { Context } from "hono";
import { PUBLIC_BASE_URL_TOKEN } from "../../../schema/api-examples.ts";
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

/**
 * The document as served: its examples name the sample under this deployment's own origin, so
 * each one runs as it stands (from /docs' "Test Request", or copied into a terminal).
 */
export function servedDocument<T>(document: T, c: Context<AppEnv>): T {
  const origin = publicBaseUrl(c.env, c.req.url);
  return JSON.parse(JSON.stringify(document).replaceAll(PUBLIC_BASE_URL_TOKEN, origin)) as T;
}
