// The parts of Stripe's webhook events that billing reads, as zod schemas: a signed event is
// still parsed before anything is written, so an unexpected shape is refused, not half-applied.
// Fields follow Stripe's API version of the `stripe` package (2026-10-28): a subscription's
// period sits on its items, an invoice names its subscription under parent.subscription_details.
// A webhook endpoint pinned to a version before 2025-03-31 sends them at the top level instead;
// those are read too, so the endpoint's version is not a trap.
import { z } from "zod";

/** An expandable reference: Stripe sends an id, or the object when expanded. */
const ref = z
  .union([z.string(), z.object({ id: z.string() })])
  .transform((value) => (typeof value === "string" ? value : value.id));

const metadata = z
  .record(z.string(), z.string())
  .nullish()
  .transform((value) => value ?? {});

export const StripeEventSchema = z.object({
  id: z.string().min(1),
  type: z.string(),
  created: z.number().int().nonnegative(),
  data: z.object({ object: z.unknown() }),
});
export type StripeEvent = z.infer<typeof StripeEventSchema>;

export const CheckoutSessionSchema = z.object({
  id: z.string(),
  mode: z.enum(["payment", "subscription", "setup"]),
  payment_status: z.enum(["paid", "unpaid", "no_payment_required"]),
  client_reference_id: z.string().nullish(),
  customer: ref.nullish(),
  subscription: ref.nullish(),
  metadata,
});
export type CheckoutSession = z.infer<typeof CheckoutSessionSchema>;

export const SubscriptionSchema = z.object({
  id: z.string(),
  customer: ref,
  status: z.string(),
  cancel_at_period_end: z.boolean(),
  cancel_at: z.number().nullish(),
  ended_at: z.number().nullish(),
  metadata,
  current_period_start: z.number().int().optional(),
  current_period_end: z.number().int().optional(),
  items: z.object({
    data: z
      .array(
        z.object({
          price: z.object({ id: z.string() }),
          current_period_start: z.number().int().optional(),
          current_period_end: z.number().int().optional(),
        }),
      )
      .min(1),
  }),
});
export type Subscription = z.infer<typeof SubscriptionSchema>;

export const InvoiceSchema = z.object({
  id: z.string(),
  customer: ref.nullish(),
  billing_reason: z.string().nullish(),
  subscription: ref.nullish(),
  parent: z
    .object({
      subscription_details: z.object({ subscription: ref, metadata }).nullish(),
    })
    .nullish(),
  lines: z.object({
    data: z.array(z.object({ period: z.object({ start: z.number(), end: z.number() }) })),
  }),
});
export type Invoice = z.infer<typeof InvoiceSchema>;

/** The subscription an invoice bills, wherever the endpoint's API version puts it. */
export function invoiceSubscription(
  invoice: Invoice,
): { subscription: string; metadata: Record<string, string> } | undefined {
  const details = invoice.parent?.subscription_details;
  if (details) return details;
  return invoice.subscription ? { subscription: invoice.subscription, metadata: {} } : undefined;
}
