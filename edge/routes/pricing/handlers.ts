import type { RouteHandler } from "@hono/zod-openapi";
import { CATALOG } from "../../../schema/plans.ts";
import type { AppEnv } from "../../context.ts";
import type { getPricingRoute } from "./routes.ts";

// The MCP get_pricing tool and the landing page serve the same CATALOG (schema/plans.ts).
export const getPricingHandler: RouteHandler<typeof getPricingRoute, AppEnv> = (c) =>
  c.json(CATALOG, 200);
