import { createRoute } from "@hono/zod-openapi";
import { UsageSchema } from "../../../schema/api.ts";
import { requireApiKey } from "../../middleware/auth.ts";
import { replicaReads } from "../../storage/d1-sessions.ts";
import {
  AUTH_SECURITY,
  BookmarkRequestHeaders,
  bookmarkedResponse,
  errorResponses,
} from "../responses.ts";

export const getUsageRoute = createRoute({
  method: "get",
  path: "/usage",
  tags: ["Account"],
  operationId: "getUsage",
  summary: "Plan, credit balance, limits and this period's usage",
  security: AUTH_SECURITY,
  middleware: [requireApiKey, replicaReads] as const,
  request: { headers: BookmarkRequestHeaders },
  responses: {
    200: bookmarkedResponse(UsageSchema, "Usage of the calling account"),
    ...errorResponses(401, 429),
  },
});
