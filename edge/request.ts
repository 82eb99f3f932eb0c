// What edge/jobs/ takes of a request in place of Hono's context (issue 35, decision 0270): the
// route adapters and MCP tools build it here, from `c`, and hand it over, so no domain function
// needs `c`.
import type { Context } from "hono";
import { publicBaseUrl } from "./config.ts";
import type { AppEnv } from "./context.ts";

/** The public origin the request came to (PUBLIC_BASE_URL when set): links are made for it. */
export function baseUrl(c: Context<AppEnv>): string {
  return publicBaseUrl(c.env, c.req.url);
}
