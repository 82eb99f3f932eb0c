// What each Stripe event does to an account, applied exactly once: the event's id goes into
// stripe_events in the same D1 batch (one transaction) as its ledger entries and state, so a
// redelivered event fails as a whole and changes nothing. Events that arrive out of order are
// sorted out by schema/ledger.ts (subscription_event_at), not by the order Stripe sends them.
import type { z } from "zod";
import {
  backToFreeStatements,
  grantPackStatements,
  linkCustomerStatement,
  PAYING_STATUSES,
  paymentFailedStatements,
  planStartStatements,
  renewalStatements,
  type Statement,
  subscriptionStateStatements,
} from "../../schema/ledger.ts";
import { CREDIT_PACK } from "../../schema/plans.ts";
import {
  CheckoutSessionSchema,
  InvoiceSchema,
  invoiceSubscription,
  type StripeEvent,
  SubscriptionSchema,
} from "../../schema/stripe.ts";
import { isUniqueViolation } from "../credits.ts";
import { ApiError } from "../errors.ts";
import { logEvent } from "../log.ts";
import {
  accountExists,
  accountOfCustomer,
  applyStripeStatements,
  rememberStripeEvent,
  stripeEventSeen,
} from "../storage/billing.ts";
import { planOfPrice, retrieveSubscription } from "./stripe.ts";

export type Outcome = "applied" | "duplicate" | "ignored";

interface Effect {
  /** Null when the event names no account of ours: recorded, nothing changed. */
  accountId: string | null;
  statements: Statement[];
}

export async function applyStripeEvent(env: Env, event: StripeEvent): Promise<Outcome> {
  if (await stripeEventSeen(env.DB, event.id)) return "duplicate";
  const effect = await effectOf(env, event);
  if (!effect) return "ignored";
  const recorded = { id: event.id, type: event.type, accountId: effect.accountId };
  try {
    await applyStripeStatements(env.DB, recorded, effect.statements);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // The event, or another event for the same session or invoice, was applied meanwhile:
    // its ledger entry already exists. Remember this event too, so it is not tried again.
    await rememberStripeEvent(env.DB, recorded);
    return "duplicate";
  }
  const outcome = effect.accountId ? "applied" : "ignored";
  logEvent("info", `stripe.event_${outcome}`, {
    stripe_event: event.id,
    type: event.type,
    account: effect.accountId,
  });
  return outcome;
}

/** The statements an event stands for, or undefined for events billing does not act on. */
async function effectOf(env: Env, event: StripeEvent): Promise<Effect | undefined> {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
      return checkoutPaid(env, event);
    case "customer.subscription.created":
    case "customer.subscription.updated":
      return subscriptionChanged(env, event);
    case "customer.subscription.deleted":
      return subscriptionEnded(env, event);
    case "invoice.paid":
      return invoicePaid(env, event);
    case "invoice.payment_failed":
      return paymentFailed(env, event);
    default:
      return undefined;
  }
}

async function checkoutPaid(env: Env, event: StripeEvent): Promise<Effect | undefined> {
  const session = parse(CheckoutSessionSchema, event);
  // Delayed payment methods complete unpaid; async_payment_succeeded follows when they pay.
  if (session.payment_status === "unpaid") return undefined;
  const accountId = await findAccount(
    env,
    [session.client_reference_id, session.metadata.account_id],
    session.customer,
  );
  if (!accountId) return { accountId: null, statements: [] };
  const link = session.customer ? [linkCustomerStatement(accountId, session.customer)] : [];
  const purchase = session.metadata.purchase ?? "";
  if (session.mode === "subscription" && session.subscription) {
    return subscriptionPaid(env, event, accountId, link, session.subscription);
  }
  if (session.mode === "payment" && purchase === "pack") {
    // Derived from the session: completed and async_payment_succeeded pay out once between them.
    const entryId = `stripe:checkout:${session.id}`;
    return {
      accountId,
      statements: [
        ...link,
        ...grantPackStatements({
          entryId,
          accountId,
          credits: CREDIT_PACK.credits,
          note: `credit pack bought (${CREDIT_PACK.credits} credits)`,
        }),
      ],
    };
  }
  logEvent("warn", "stripe.checkout_not_ours", { stripe_event: event.id, session: session.id });
  return undefined;
}

/**
 * A plan bought through Checkout starts once per subscription, as the subscription itself says:
 * its plan is the one its price stands for, read from Stripe, never the session's metadata (two
 * signed sessions naming one subscription with different purchases must not both pay out).
 * A subscription not yet paid for (incomplete) starts nothing here: its own event does, once it
 * is active.
 */
async function subscriptionPaid(
  env: Env,
  event: StripeEvent,
  accountId: string,
  link: Statement[],
  subscriptionId: string,
): Promise<Effect | undefined> {
  const subscription = await retrieveSubscription(env, subscriptionId);
  const price = subscription.items.data[0].price.id;
  const plan = planOfPrice(env, price);
  if (!plan) {
    logEvent("warn", "stripe.price_unknown", { stripe_event: event.id, price });
    return undefined;
  }
  if (!PAYING_STATUSES.includes(subscription.status)) return { accountId, statements: link };
  return {
    accountId,
    statements: [
      ...link,
      ...planStartStatements({
        accountId,
        subscriptionId: subscription.id,
        eventAt: event.created,
        plan,
        // Derived from the subscription: every session and event naming it starts it once.
        entryId: `stripe:plan-start:${subscription.id}`,
      }),
    ],
  };
}

async function subscriptionChanged(env: Env, event: StripeEvent): Promise<Effect> {
  const { subscription, accountId } = await subscriptionOfEvent(env, event);
  if (!accountId) return { accountId: null, statements: [] };
  const item = subscription.items.data[0];
  const plan = planOfPrice(env, item.price.id) ?? null;
  if (!plan)
    logEvent("warn", "stripe.price_unknown", { stripe_event: event.id, price: item.price.id });
  return {
    accountId,
    statements: subscriptionStateStatements({
      accountId,
      subscriptionId: subscription.id,
      eventAt: event.created,
      entryId: `stripe:${event.id}`,
      plan,
      status: subscription.status,
      // The portal may cancel by date (cancel_at) rather than with the flag.
      cancelAtPeriodEnd: subscription.cancel_at_period_end || Boolean(subscription.cancel_at),
      periodStart: item.current_period_start ?? subscription.current_period_start ?? null,
      periodEnd: item.current_period_end ?? subscription.current_period_end ?? null,
    }),
  };
}

async function subscriptionEnded(env: Env, event: StripeEvent): Promise<Effect> {
  const { subscription, accountId } = await subscriptionOfEvent(env, event);
  if (!accountId) return { accountId: null, statements: [] };
  return {
    accountId,
    statements: backToFreeStatements({
      accountId,
      subscriptionId: subscription.id,
      eventAt: event.created,
      entryId: `stripe:${event.id}`,
      endedAt: subscription.ended_at ?? event.created,
    }),
  };
}

async function invoicePaid(env: Env, event: StripeEvent): Promise<Effect | undefined> {
  const invoice = parse(InvoiceSchema, event);
  // The first invoice is the Checkout (plan start); proration invoices change no credits.
  if (invoice.billing_reason !== "subscription_cycle") return undefined;
  const details = invoiceSubscription(invoice);
  const period = invoice.lines.data[0]?.period;
  if (!details || !period) return undefined;
  const accountId = await findAccount(env, [details.metadata.account_id], invoice.customer);
  if (!accountId) return { accountId: null, statements: [] };
  return {
    accountId,
    statements: renewalStatements({
      accountId,
      subscriptionId: details.subscription,
      eventAt: event.created,
      // Derived from the invoice: one invoice renews once, whichever event carries it.
      entryId: `stripe:renewal:${invoice.id}`,
      periodStart: period.start,
      periodEnd: period.end,
    }),
  };
}

async function paymentFailed(env: Env, event: StripeEvent): Promise<Effect | undefined> {
  const invoice = parse(InvoiceSchema, event);
  const details = invoiceSubscription(invoice);
  if (!details) return undefined;
  const accountId = await findAccount(env, [details.metadata.account_id], invoice.customer);
  if (!accountId) return { accountId: null, statements: [] };
  return {
    accountId,
    statements: paymentFailedStatements({
      accountId,
      subscriptionId: details.subscription,
      eventAt: event.created,
    }),
  };
}

/**
 * The account an event is about: by the account id our Checkout put in the session or the
 * subscription's metadata, else by the Stripe customer stored when Checkout began.
 */
/** The event's subscription and the account it belongs to (null when it is not ours). */
async function subscriptionOfEvent(env: Env, event: StripeEvent) {
  const subscription = parse(SubscriptionSchema, event);
  const accountId = await findAccount(
    env,
    [subscription.metadata.account_id],
    subscription.customer,
  );
  return { subscription, accountId };
}

async function findAccount(
  env: Env,
  accountIds: (string | null | undefined)[],
  customerId: string | null | undefined,
): Promise<string | null> {
  for (const id of accountIds) {
    if (!id) continue;
    if (await accountExists(env.DB, id)) return id;
  }
  return customerId ? accountOfCustomer(env.DB, customerId) : null;
}

function parse<T extends z.ZodType>(schema: T, event: StripeEvent): z.infer<T> {
  const parsed = schema.safeParse(event.data.object);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ApiError(
    "InvalidRequest",
    `Stripe event ${event.id} (${event.type}): data.object.${issue.path.join(".")}: ${issue.message}`,
  );
}
