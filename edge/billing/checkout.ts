// Buying through Stripe: Checkout for a plan or a pack, and the customer portal. The
// dashboard calls these; edge/routes/billing holds Stripe's webhook. (Being built: issue 8.)
import type { AccountRow } from "../../schema/db.ts";

export type Purchase = "starter" | "pro" | "scale" | "pack";

/** True when Stripe is configured (STRIPE_SECRET_KEY and the price ids). */
export function billingEnabled(_env: Env): boolean {
  return false;
}

/** Creates a Checkout Session for `purchase` and returns the URL to send the browser to. */
export async function startCheckout(
  _env: Env,
  _account: AccountRow,
  _purchase: Purchase,
  _origin: string,
): Promise<string> {
  throw new Error("Stripe Checkout is not built yet");
}

/** Creates a customer-portal session (change or cancel a plan) and returns its URL. */
export async function openCustomerPortal(
  _env: Env,
  _account: AccountRow,
  _origin: string,
): Promise<string> {
  throw new Error("the Stripe customer portal is not built yet");
}
