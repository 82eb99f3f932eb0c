import { createRoute } from "@hono/zod-openapi";
import {
  ListWebhookDeliveriesQuerySchema,
  WebhookDeliveryListSchema,
} from "../../../schema/webhook-deliveries.ts";
import { requireApiKey } from "../../middleware/auth.ts";
import { AUTH_SECURITY, errorResponses, jsonResponse } from "../responses.ts";

export const listWebhookDeliveriesRoute = createRoute({
  method: "get",
  path: "/webhook-deliveries",
  tags: ["Webhooks"],
  operationId: "listWebhookDeliveries",
  summary:
    "The account's webhook deliveries of the last 30 days, newest first, each with its attempts",
  security: AUTH_SECURITY,
  middleware: [requireApiKey] as const,
  request: { query: ListWebhookDeliveriesQuerySchema },
  responses: {
    200: jsonResponse(WebhookDeliveryListSchema, "A page of deliveries"),
    ...errorResponses(400, 401, 429),
  },
});
