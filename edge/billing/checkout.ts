// Buying through Stripe: Checkout for a plan or a pack, and the customer portal. The
// dashboard calls these; what a purchase does to the account is applied by Stripe's webhook
// (edge/billing/webhook.ts), never here, so a closed tab or a forged return URL grants nothing.
import type Stripe from "stripe";
import type { AccountRow } from "../../schema/db.ts";
import { edgeConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import { keepCustomerId } from "../storage/billing.ts";
import {
  callStripe,
  PURCHASES,
  type Purchase,
  priceOf,
  stripeClient,
  unavailable,
} from "./stripe.ts";

export type { Purchase };

/** True when Stripe is configured (STRIPE_SECRET_KEY and the price ids). */
export function billingEnabled(env: Env): boolean {
  // Without the webhook secret nothing bought would ever reach the account: no buy buttons.
  const { secretKey, webhookSecret } = edgeConfig(env).stripe;
  return (
    Boolean(secretKey) &&
    Boolean(webhookSecret) &&
    PURCHASES.every((purchase) => priceOf(env, purchase) !== "")
  );
}

/** Creates a Checkout Session for `purchase` and returns the URL to send the browser to. */
export async function startCheckout(
  env: Env,
  account: AccountRow,
  purchase: Purchase,
  origin: string,
): Promise<string> {
  requireBilling(env);
  if (!PURCHASES.includes(purchase)) {
    throw new ApiError("InvalidRequest", `unknown purchase ${String(purchase)}`);
  }
  const base = returnOrigin(origin);
  // A second subscription would bill twice: a subscriber changes plan in the portal.
  if (purchase !== "pack" && hasLiveSubscription(account)) {
    return openCustomerPortal(env, account, origin);
  }
  const stripe = stripeClient(env);
  const customer = await customerOf(env, stripe, account);
  const metadata = { account_id: account.id, purchase };
  const common = {
    customer,
    client_reference_id: account.id,
    line_items: [{ price: priceOf(env, purchase), quantity: 1 }],
    metadata,
    success_url: `${base}/dashboard?checkout=success`,
    cancel_url: `${base}/dashboard?checkout=cancelled`,
  };
  const session = await callStripe("create a Checkout Session", () =>
    purchase === "pack"
      ? stripe.checkout.sessions.create({
          ...common,
          mode: "payment",
          payment_intent_data: { metadata },
        })
      : stripe.checkout.sessions.create({
          ...common,
          mode: "subscription",
          // The subscription's own events name the account too, whatever order they come in.
          subscription_data: { metadata: { account_id: account.id } },
        }),
  );
  if (!session.url) throw unavailable("Stripe returned a Checkout Session without a URL");
  return session.url;
}

/** Creates a customer-portal session (change or cancel a plan) and returns its URL. */
export async function openCustomerPortal(
  env: Env,
  account: AccountRow,
  origin: string,
): Promise<string> {
  requireBilling(env);
  const base = returnOrigin(origin);
  const stripe = stripeClient(env);
  const customer = await customerOf(env, stripe, account);
  const portal = await callStripe("open the customer portal", () =>
    stripe.billingPortal.sessions.create({ customer, return_url: `${base}/dashboard` }),
  );
  return portal.url;
}

function hasLiveSubscription(account: AccountRow): boolean {
  return (
    account.stripeSubscriptionId !== null &&
    !["canceled", "incomplete_expired"].includes(account.subscriptionStatus ?? "")
  );
}

/**
 * The account's Stripe customer, created and stored the first time. The idempotency key makes
 * two concurrent first purchases share one customer; only the first stored id is kept.
 */
async function customerOf(env: Env, stripe: Stripe, account: AccountRow): Promise<string> {
  if (account.stripeCustomerId) return account.stripeCustomerId;
  const created = await callStripe("create a customer", () =>
    stripe.customers.create(
      { email: account.email, metadata: { account_id: account.id } },
      { idempotencyKey: `stills-customer-${account.id}` },
    ),
  );
  const stored = await keepCustomerId(env.DB, account.id, created.id);
  if (!stored) throw new ApiError("InvalidRequest", "the account no longer exists");
  return stored;
}

function requireBilling(env: Env) {
  if (!billingEnabled(env)) {
    throw unavailable("Stripe is not configured on this deployment; plans are granted by admin");
  }
}

/** Where Stripe sends the browser back: the origin only, and only http(s). */
function returnOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new ApiError("InvalidRequest", `not an origin: ${origin}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ApiError("InvalidRequest", `not an http(s) origin: ${origin}`);
  }
  return url.origin;
}
