// Starting Checkout and the customer portal against a local stand-in for Stripe's API: what
// the worker asks Stripe for (mode, price, customer, metadata, return URLs) is checked field by
// field, and the customer it creates is stored once and reused.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { billingEnabled, openCustomerPortal, startCheckout } from "../../edge/billing/checkout.ts";
import { ApiError } from "../../edge/errors.ts";
import type { AccountRow } from "../../schema/db.ts";
import { createAccount } from "./support/api.ts";
import { PRICES, standInStripeApi, stripeEnv } from "./support/stripe-stand-in.ts";

const ORIGIN = "https://dash.stills.test";

async function accountRow(accountId: string): Promise<AccountRow> {
  const row = await env.DB.prepare(
    `SELECT id, email, plan, plan_credits AS planCredits, pack_credits AS packCredits,
            reserved_credits AS reservedCredits, period_start AS periodStart,
            period_end AS periodEnd, subscription_status AS subscriptionStatus,
            cancel_at_period_end AS cancelAtPeriodEnd, webhook_secret AS webhookSecret,
            stripe_customer_id AS stripeCustomerId,
            stripe_subscription_id AS stripeSubscriptionId,
            subscription_event_at AS subscriptionEventAt, created_at AS createdAt
     FROM accounts WHERE id = ?`,
  )
    .bind(accountId)
    .first<AccountRow>();
  if (!row) throw new Error(`no account ${accountId}`);
  return { ...row, cancelAtPeriodEnd: Boolean(row.cancelAtPeriodEnd) };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("Checkout", () => {
  it("subscribes to a plan: a customer made once, subscription mode, the plan's price", async () => {
    const calls = standInStripeApi();
    const email = `${crypto.randomUUID()}@example.com`;
    const { accountId } = await createAccount({ email });

    const url = await startCheckout(stripeEnv(), await accountRow(accountId), "pro", ORIGIN);
    expect(url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_standin_\d+$/);

    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      "POST /v1/customers",
      "POST /v1/checkout/sessions",
    ]);
    const [customer, session] = calls;
    expect(customer.params).toEqual({ email, "metadata[account_id]": accountId });
    expect(customer.idempotencyKey).toBe(`stills-customer-${accountId}`);
    expect(session.params).toEqual({
      mode: "subscription",
      customer: "cus_standin_1",
      client_reference_id: accountId,
      "line_items[0][price]": PRICES.pro,
      "line_items[0][quantity]": "1",
      "metadata[account_id]": accountId,
      "metadata[purchase]": "pro",
      "subscription_data[metadata][account_id]": accountId,
      success_url: `${ORIGIN}/dashboard?checkout=success`,
      cancel_url: `${ORIGIN}/dashboard?checkout=cancelled`,
    });
    expect((await accountRow(accountId)).stripeCustomerId).toBe("cus_standin_1");
  });

  it("buys a pack in payment mode with the stored customer, and opens the portal", async () => {
    const calls = standInStripeApi();
    const { accountId } = await createAccount();
    await env.DB.prepare("UPDATE accounts SET stripe_customer_id = 'cus_known' WHERE id = ?")
      .bind(accountId)
      .run();
    const account = await accountRow(accountId);

    await startCheckout(stripeEnv(), account, "pack", `${ORIGIN}/dashboard/billing?x=1`);
    expect(calls).toHaveLength(1);
    expect(calls[0].path).toBe("/v1/checkout/sessions");
    expect(calls[0].params).toEqual({
      mode: "payment",
      customer: "cus_known",
      client_reference_id: accountId,
      "line_items[0][price]": PRICES.pack,
      "line_items[0][quantity]": "1",
      "metadata[account_id]": accountId,
      "metadata[purchase]": "pack",
      "payment_intent_data[metadata][account_id]": accountId,
      "payment_intent_data[metadata][purchase]": "pack",
      success_url: `${ORIGIN}/dashboard?checkout=success`,
      cancel_url: `${ORIGIN}/dashboard?checkout=cancelled`,
    });

    const portal = await openCustomerPortal(stripeEnv(), account, ORIGIN);
    expect(portal).toMatch(/^https:\/\/billing\.stripe\.test\/p\/session\/\d+$/);
    expect(calls[1]).toMatchObject({
      method: "POST",
      path: "/v1/billing_portal/sessions",
      params: { customer: "cus_known", return_url: `${ORIGIN}/dashboard` },
      authorization: "Bearer sk_test_stills_stand_in",
    });
  });

  it("sends a subscriber who buys another plan to the portal instead of a second subscription", async () => {
    const calls = standInStripeApi();
    const { accountId } = await createAccount();
    await env.DB.prepare(
      `UPDATE accounts SET stripe_customer_id = 'cus_sub', stripe_subscription_id = 'sub_live',
         subscription_status = 'active', plan = 'starter' WHERE id = ?`,
    )
      .bind(accountId)
      .run();
    const url = await startCheckout(stripeEnv(), await accountRow(accountId), "scale", ORIGIN);
    expect(url).toMatch(/^https:\/\/billing\.stripe\.test\//);
    expect(calls.map((call) => call.path)).toEqual(["/v1/billing_portal/sessions"]);
    // A pack is still a Checkout.
    await startCheckout(stripeEnv(), await accountRow(accountId), "pack", ORIGIN);
    expect(calls.at(-1)?.path).toBe("/v1/checkout/sessions");
  });

  it("is off without Stripe's keys and prices, and says so in the spec's error shape", async () => {
    const calls = standInStripeApi();
    const account = await accountRow((await createAccount()).accountId);
    expect(billingEnabled(env)).toBe(false);
    expect(billingEnabled(stripeEnv())).toBe(true);
    for (const missing of [
      { STRIPE_SECRET_KEY: "" },
      { STRIPE_WEBHOOK_SECRET: undefined },
      { STRIPE_PRICE_SCALE: " " },
    ]) {
      const off = stripeEnv(missing as Partial<Env>);
      expect(billingEnabled(off)).toBe(false);
      const err = await refusal(startCheckout(off, account, "starter", ORIGIN));
      expect(err.status).toBe(503);
      expect(err.toBody().data.name).toBe("ServiceUnavailable");
      expect((await refusal(openCustomerPortal(off, account, ORIGIN))).status).toBe(503);
    }
    expect(calls).toEqual([]);
  });

  it("refuses a bad origin or purchase, and turns Stripe's failures into 503", async () => {
    const calls = standInStripeApi();
    const account = await accountRow((await createAccount()).accountId);
    for (const origin of ["not a url", "javascript:alert(1)", "ftp://stills.test"]) {
      expect((await refusal(startCheckout(stripeEnv(), account, "pro", origin))).status).toBe(400);
    }
    const bogus = "enterprise" as "pro";
    expect((await refusal(startCheckout(stripeEnv(), account, bogus, ORIGIN))).status).toBe(400);
    expect(calls).toEqual([]);

    // Stripe refuses the key: the dashboard gets a clear 503, not a stack trace.
    const wrongKey = stripeEnv({ STRIPE_SECRET_KEY: "sk_test_wrong" });
    const err = await refusal(startCheckout(wrongKey, account, "pro", ORIGIN));
    expect(err.status).toBe(503);
    expect(err.message).toBe("Stripe could not create a customer");
    expect(calls.map((call) => call.authorization)).toEqual(["Bearer sk_test_wrong"]);
    expect((await accountRow(account.id)).stripeCustomerId).toBeNull();
  });
});
