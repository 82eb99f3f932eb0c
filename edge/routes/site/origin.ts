import type { Context } from "hono";
import { publicBaseUrl } from "../../config.ts";
import type { AppEnv } from "../../context.ts";

/** The origin the samples on our pages should call: the public one (edge/config.ts). */
export function publicOrigin(c: Context<AppEnv>): string {
  return publicBaseUrl(c.env, c.req.url);
}
