// The Stripe client and the price ↔ purchase table, read from the parsed settings
// (edge/config.ts; README "Configuration": STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET,
// STRIPE_PRICE_*, STRIPE_API_BASE).
import Stripe from "stripe";
import type { PlanName } from "../../schema/plans.ts";
import { type Subscription, SubscriptionSchema } from "../../schema/stripe.ts";
import { edgeConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import { errorFields, logEvent } from "../log.ts";

export type Purchase = "starter" | "pro" | "scale" | "pack";
export const PURCHASES: readonly Purchase[] = ["starter", "pro", "scale", "pack"];

/** The Stripe price id of `purchase`; "" when it is not configured. */
export function priceOf(env: Env, purchase: Purchase): string {
  return edgeConfig(env).stripe.prices[purchase] ?? "";
}

/** The plan a subscription's price stands for; undefined for a price that is not ours. */
export function planOfPrice(env: Env, priceId: string): Exclude<PlanName, "free"> | undefined {
  for (const plan of ["starter", "pro", "scale"] as const) {
    if (priceOf(env, plan) !== "" && priceOf(env, plan) === priceId) return plan;
  }
  return undefined;
}

/**
 * The SDK on Workers: fetch for HTTP, and STRIPE_API_BASE (a local stand-in's origin in tests
 * and development) in place of api.stripe.com when set.
 */
export function stripeClient(env: Env): Stripe {
  const { apiBase, secretKey } = edgeConfig(env).stripe;
  const target = apiBase ? new URL(apiBase) : undefined;
  return new Stripe(secretKey ?? "", {
    // Read fetch at call time, not construction time, so the runtime's current fetch is used.
    httpClient: Stripe.createFetchHttpClient((input, init) => fetch(input, init)),
    maxNetworkRetries: 1,
    ...(target && {
      protocol: target.protocol === "http:" ? ("http" as const) : ("https" as const),
      host: target.hostname,
      port: target.port || (target.protocol === "https:" ? 443 : 80),
    }),
  });
}

/** A Stripe API call: any failure is logged and answered 503 (the caller, or Stripe, retries). */
export async function callStripe<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    logEvent("error", "stripe.call_failed", { call: what, ...errorFields(err) });
    throw unavailable(`Stripe could not ${what}`);
  }
}

export function unavailable(message: string) {
  return new ApiError("ServiceUnavailable", message, {
    userMessage: "Payments are not available right now. Please try again later.",
  });
}

/**
 * A subscription as Stripe holds it now: what it bills (its price, so its plan) and its status,
 * which no Checkout Session's metadata can say otherwise.
 */
export async function retrieveSubscription(env: Env, id: string): Promise<Subscription> {
  const stripe = stripeClient(env);
  const raw = await callStripe("read a subscription", () => stripe.subscriptions.retrieve(id));
  const parsed = SubscriptionSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  logEvent("error", "stripe.call_failed", {
    call: "read a subscription",
    error: `not a subscription: ${parsed.error.issues[0]?.message ?? "invalid"}`,
  });
  throw unavailable("Stripe answered a subscription we cannot read");
}
