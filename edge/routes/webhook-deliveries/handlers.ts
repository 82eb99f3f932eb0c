import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";
import { listWebhookDeliveries } from "../../webhook-deliveries.ts";
import type { listWebhookDeliveriesRoute } from "./routes.ts";

export const listWebhookDeliveriesHandler: RouteHandler<
  typeof listWebhookDeliveriesRoute,
  AppEnv
> = async (c) =>
  c.json(await listWebhookDeliveries(c.env, c.get("account").id, c.req.valid("query")), 200);
