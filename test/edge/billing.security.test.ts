// Stripe's webhook against a holder of signed events (issue 33): a signature dated ahead of our
// clock beyond the tolerance is refused like a stale one, and a plan bought through Checkout is
// the one its subscription bills, started once per subscription, whatever the sessions' metadata
// say.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount } from "./support/api.ts";
import {
  balancesAndLedger,
  checkoutSession,
  deliver,
  PRICES,
  signatureFor,
  stripeEvent,
  stripeSubscriptions,
  subscription,
  subscriptionOf,
} from "./support/stripe-stand-in.ts";

async function recorded(eventId: string) {
  return env.DB.prepare("SELECT id FROM stripe_events WHERE id = ?").bind(eventId).first();
}

async function planEntries(accountId: string) {
  const { results } = await env.DB.prepare(
    `SELECT kind, plan_delta FROM credit_ledger
     WHERE account_id = ? AND kind IN ('plan-start', 'plan-change') ORDER BY rowid`,
  )
    .bind(accountId)
    .all();
  return results;
}

describe("signature times", () => {
  it("refuses a signature dated ahead of our clock beyond the tolerance, and changes nothing", async () => {
    const account = await createAccount();
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ accountId: account.accountId, customer: "cus_future", purchase: "pack" }),
    );
    const body = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);
    for (const ahead of [301, 3600, 86_400 * 365]) {
      const answer = await deliver(body, { signature: signatureFor(body, undefined, now + ahead) });
      expect(answer.status, `${ahead} s ahead`).toBe(400);
      expect(answer.body).toMatchObject({
        name: "BadRequest",
        data: { name: "InvalidRequest" },
      });
      expect(answer.body.message).toContain("ahead");
    }
    expect(await recorded(event.id)).toBeNull();
    expect(await balancesAndLedger(account.accountId)).toMatchObject({ plan: 60, pack: 0 });

    // A clock a little ahead of ours, within the tolerance, is Stripe's own skew: accepted.
    const skewed = await deliver(body, { signature: signatureFor(body, undefined, now + 60) });
    expect(skewed.body).toEqual({ received: true, outcome: "applied" });
    expect(await balancesAndLedger(account.accountId)).toMatchObject({ plan: 60, pack: 500 });
  });
});

describe("a plan bought through Checkout", () => {
  it("starts once per subscription: a second signed session for it, naming another plan, pays nothing", async () => {
    const account = await createAccount();
    const n = crypto.randomUUID().slice(0, 8);
    const ids = { accountId: account.accountId, customer: `cus_${n}`, subscription: `sub_${n}` };
    const pro = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ ...ids, purchase: "pro" }),
      1_800_000_000,
    );
    const scale = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ ...ids, purchase: "scale" }),
      1_800_000_060,
    );
    // What Stripe bills: the pro price.
    stripeSubscriptions.set(
      ids.subscription,
      subscription({ id: ids.subscription, ...ids, price: PRICES.pro }),
    );

    expect((await deliver(pro)).body).toEqual({ received: true, outcome: "applied" });
    expect((await deliver(scale)).body).toEqual({ received: true, outcome: "duplicate" });
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "pro",
      stripe_subscription_id: ids.subscription,
    });
    expect(await planEntries(account.accountId)).toEqual([
      { kind: "plan-start", plan_delta: 5000 - 60 },
    ]);
    expect(await balancesAndLedger(account.accountId)).toMatchObject({
      plan: 5000,
      ledger_plan: 5000,
    });
  });

  it("is the plan the subscription bills, not the one the session's metadata names", async () => {
    const account = await createAccount();
    const n = crypto.randomUUID().slice(0, 8);
    const ids = { accountId: account.accountId, customer: `cus_${n}`, subscription: `sub_${n}` };
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ ...ids, purchase: "scale" }),
    );
    stripeSubscriptions.set(
      ids.subscription,
      subscription({ id: ids.subscription, ...ids, price: PRICES.starter }),
    );
    expect((await deliver(event)).body.outcome).toBe("applied");
    expect(await subscriptionOf(account.accountId)).toMatchObject({ plan: "starter" });
    expect(await balancesAndLedger(account.accountId)).toMatchObject({ plan: 1500 });
  });

  it("starts nothing until Stripe can say what the subscription bills (503, so Stripe retries)", async () => {
    const account = await createAccount();
    const n = crypto.randomUUID().slice(0, 8);
    const ids = { accountId: account.accountId, customer: `cus_${n}`, subscription: `sub_${n}` };
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ ...ids, purchase: "pro" }),
    );
    stripeSubscriptions.delete(ids.subscription);
    const refused = await deliver(event);
    expect(refused.status).toBe(503);
    expect(refused.body.data.name).toBe("ServiceUnavailable");
    expect(await recorded(event.id)).toBeNull();
    expect(await subscriptionOf(account.accountId)).toMatchObject({ plan: "free" });

    // Stripe's retry, once the subscription can be read, applies it.
    stripeSubscriptions.set(
      ids.subscription,
      subscription({ id: ids.subscription, ...ids, price: PRICES.pro }),
    );
    expect((await deliver(event)).body.outcome).toBe("applied");
    expect(await subscriptionOf(account.accountId)).toMatchObject({ plan: "pro" });
  });

  it("waits for the subscription's own event while it is not paid for yet", async () => {
    const account = await createAccount();
    const n = crypto.randomUUID().slice(0, 8);
    const ids = { accountId: account.accountId, customer: `cus_${n}`, subscription: `sub_${n}` };
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ ...ids, purchase: "pro" }),
    );
    stripeSubscriptions.set(
      ids.subscription,
      subscription({ id: ids.subscription, ...ids, price: PRICES.pro, status: "incomplete" }),
    );
    expect((await deliver(event)).body.outcome).toBe("applied");
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "free",
      stripe_customer_id: ids.customer,
    });
    expect(await planEntries(account.accountId)).toEqual([]);
  });
});
