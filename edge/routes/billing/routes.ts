// Stripe's webhook: POST /billing/stripe/webhook. Not part of the public API (it is not under
// /v1 and not in its document): only Stripe calls it, authenticated by Stripe-Signature, which
// the handler checks against the raw body before anything is parsed.
import { createRoute, z } from "@hono/zod-openapi";
import { jsonBody } from "../../app.ts";
import { errorResponses } from "../responses.ts";

/** Stripe's events are a few kilobytes; an invoice's event lists at most its first lines. */
const MAX_EVENT_BYTES = 256 * 1024;

export const StripeWebhookAnswerSchema = z.object({
  received: z.literal(true),
  outcome: z.enum(["applied", "duplicate", "ignored"]),
});

export const stripeWebhookRoute = createRoute({
  method: "post",
  path: "/billing/stripe/webhook",
  tags: ["Billing"],
  operationId: "receiveStripeEvent",
  summary: "Apply one signed Stripe event to its account, once",
  hide: true,
  middleware: [jsonBody(MAX_EVENT_BYTES)] as const,
  responses: {
    200: {
      description: "The event was verified and applied, or was already applied, or is not ours",
      content: { "application/json": { schema: StripeWebhookAnswerSchema } },
    },
    ...errorResponses(400),
  },
});
