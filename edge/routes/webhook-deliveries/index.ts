import { createRouter } from "../../app.ts";
import { listWebhookDeliveriesHandler } from "./handlers.ts";
import { listWebhookDeliveriesRoute } from "./routes.ts";

export const webhookDeliveriesRouter = createRouter().openapi(
  listWebhookDeliveriesRoute,
  listWebhookDeliveriesHandler,
);
