import type { Context } from "hono";
import type { AppEnv } from "../../context.ts";

/** The origin the samples on our pages should call: the configured public one, else this one. */
export function publicOrigin(c: Context<AppEnv>): string {
  const configured = c.env.PUBLIC_BASE_URL;
  return configured ? new URL(configured).origin : new URL(c.req.url).origin;
}
