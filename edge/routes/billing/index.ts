import { createRouter } from "../../app.ts";
import { stripeWebhookHandler } from "./handlers.ts";
import { stripeWebhookRoute } from "./routes.ts";

export const billingRouter = createRouter().openapi(stripeWebhookRoute, stripeWebhookHandler);
