import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";
import { d1Of } from "../../storage/d1-sessions.ts";
import { usageBody } from "../../usage.ts";
import type { getUsageRoute } from "./routes.ts";

// The body is built in edge/usage.ts, where the MCP get_usage tool reads it too.
export const getUsageHandler: RouteHandler<typeof getUsageRoute, AppEnv> = async (c) =>
  c.json(await usageBody(d1Of(c), c.get("account").id), 200);
