import { createRoute } from "@hono/zod-openapi";
import { UsageSchema } from "../../../schema/api.ts";
import { createRouter } from "../../app.ts";
import { requireApiKey } from "../../middleware/auth.ts";
import { usageBody } from "../../usage.ts";
import { AUTH_SECURITY, errorResponses, jsonResponse } from "../responses.ts";

export const getUsageRoute = createRoute({
  method: "get",
  path: "/usage",
  tags: ["Account"],
  operationId: "getUsage",
  summary: "Plan, credit balance, limits and this period's usage",
  security: AUTH_SECURITY,
  middleware: [requireApiKey] as const,
  responses: {
    200: jsonResponse(UsageSchema, "Usage of the calling account"),
    ...errorResponses(401, 429),
  },
});

export const usageRouter = createRouter().openapi(getUsageRoute, async (c) =>
  c.json(await usageBody(c), 200),
);
