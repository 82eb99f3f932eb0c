// The webhook delivery log (table `webhook_deliveries` in schema/db.ts): its bounds, the events a
// delivery can carry, and its shape in the API (GET /v1/webhook-deliveries) and the dashboard.
// Decisions 0210 (the log and its bounds) and 0211 (both signatures after a rotation).
import { z } from "@hono/zod-openapi";
import { queryInteger } from "./api.ts";
import { BatchCompletedMessageSchema } from "./batches.ts";
import { WebhookMessageSchema } from "./messages.ts";

/** Deliveries older than this are pruned by the cron. */
export const WEBHOOK_DELIVERY_DAYS = 30;
/** An account keeps its newest this many deliveries; each new one drops the oldest past it. */
export const WEBHOOK_DELIVERIES_KEPT = 500;
/** The body kept of each delivery; a longer one keeps its start and is marked truncated. */
export const WEBHOOK_BODY_KEPT = 64 * 1024;
/** A delivery keeps its last this many attempts (resends add attempts without end). */
export const WEBHOOK_ATTEMPTS_KEPT = 25;
/** After a rotation, the replaced secret signs beside the new one this long. */
export const PREVIOUS_SECRET_HOURS = 24;

export const WEBHOOK_EVENT_TYPES = [
  "job.completed",
  "job.failed",
  "batch.completed",
  "webhook.test",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What the webhooks queue carries: a job's or a test's event (messages.ts), or a batch's end. */
export const WebhookQueueMessageSchema = z.union([
  WebhookMessageSchema,
  BatchCompletedMessageSchema,
]);
export type WebhookQueueMessage = z.infer<typeof WebhookQueueMessageSchema>;

/**
 * Why an attempt was made: the queue's own (first delivery and its retries), a resend asked
 * for on the dashboard, or a test event.
 */
export const WEBHOOK_TRIGGERS = ["automatic", "resend", "test"] as const;
export type WebhookTrigger = (typeof WEBHOOK_TRIGGERS)[number];

export const WebhookAttemptSchema = z
  .object({
    attempted_at: z.iso.datetime().openapi({ description: "When the request was sent" }),
    status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's HTTP status; null when it gave none" }),
    error: z
      .string()
      .nullable()
      .openapi({ description: "Why no answer came (a timeout, a refused address …)" }),
    latency_ms: z.number().int().openapi({ description: "From sending to the answer's headers" }),
    trigger: z.enum(WEBHOOK_TRIGGERS),
  })
  .openapi("WebhookAttempt");
export type WebhookAttempt = z.infer<typeof WebhookAttemptSchema>;

export const WEBHOOK_DELIVERY_STATES = ["pending", "delivered", "failing"] as const;

export const WebhookDeliverySchema = z
  .object({
    id: z.string().openapi({ description: "The event's webhook-id header" }),
    object: z.literal("webhook_delivery"),
    type: z.enum(WEBHOOK_EVENT_TYPES),
    job_id: z
      .string()
      .nullable()
      .openapi({ description: "The job the event is about (null for a batch's or a test's)" }),
    url: z.string().openapi({ description: "Where it was sent" }),
    state: z.enum(WEBHOOK_DELIVERY_STATES).openapi({
      description:
        "delivered once any attempt got a 2xx; failing when the last attempt did not; pending before the first attempt",
    }),
    last_status_code: z.number().int().nullable(),
    attempts_count: z.number().int().openapi({ description: "All attempts, also those not kept" }),
    attempts: z.array(WebhookAttemptSchema).openapi({
      description: `Oldest first; the last ${WEBHOOK_ATTEMPTS_KEPT} are kept`,
    }),
    body: z.string().nullable().openapi({ description: "The body last sent (JSON text)" }),
    body_truncated: z.boolean().openapi({
      description: `True when the body was longer than ${WEBHOOK_BODY_KEPT} characters and only its start is kept`,
    }),
    created_at: z.iso.datetime(),
    delivered_at: z.iso.datetime().nullable(),
  })
  .openapi("WebhookDelivery");
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookDeliveryListSchema = z
  .object({
    total: z.number().int(),
    limit: z.number().int(),
    skip: z.number().int(),
    data: z.array(WebhookDeliverySchema),
  })
  .openapi("WebhookDeliveryList");

export const ListWebhookDeliveriesQuerySchema = z.object({
  limit: queryInteger(1, 100, 20),
  skip: queryInteger(0, WEBHOOK_DELIVERIES_KEPT, 0),
});

/** The `data` of a test event: not a job, so a receiver can tell it apart by `type` alone. */
export interface WebhookTestData {
  object: "webhook_test";
  id: string;
  message: string;
}
