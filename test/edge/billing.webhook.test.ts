// Stripe's webhook inside workerd: signed event fixtures delivered to the worker's own fetch
// handler, then the account, its ledger and GET /v1/usage read back. Who may call it; what
// each event does; replays; and events delivered out of order.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { renewPlanCredits } from "../../edge/maintenance.ts";
import { addMonth } from "../../schema/accounts.ts";
import { api, createAccount, type TestAccount } from "./support/api.ts";
import {
  balancesAndLedger,
  checkoutSession,
  deliver,
  invoice,
  PRICES,
  type StripeEventFixture,
  signatureFor,
  stripeEnv,
  stripeEvent,
  subscription,
  subscriptionOf,
} from "./support/stripe-stand-in.ts";

const DAY = 86_400;

async function expectLedgerMatches(accountId: string) {
  const row = await balancesAndLedger(accountId);
  expect(row).not.toBeNull();
  expect({ plan: row?.plan, pack: row?.pack, reserved: row?.reserved }).toEqual({
    plan: row?.ledger_plan,
    pack: row?.ledger_pack,
    reserved: row?.ledger_reserved,
  });
  return row;
}

async function usage(account: TestAccount) {
  const response = await api("GET", "/v1/usage", { headers: account.auth });
  expect(response.status).toBe(200);
  return response.body;
}

async function recorded(eventId: string) {
  return env.DB.prepare("SELECT id, type, account_id FROM stripe_events WHERE id = ?")
    .bind(eventId)
    .first();
}

async function ledgerKinds(accountId: string) {
  const { results } = await env.DB.prepare(
    "SELECT kind, plan_delta, pack_delta FROM credit_ledger WHERE account_id = ? ORDER BY rowid",
  )
    .bind(accountId)
    .all();
  return results;
}

/** A free account that bought `plan` through Checkout: subscription `sub_<n>`, customer `cus_<n>`. */
async function subscribed(plan: "starter" | "pro" | "scale", created = 1_800_000_000) {
  const account = await createAccount();
  const n = crypto.randomUUID().slice(0, 8);
  const ids = { subscription: `sub_${n}`, customer: `cus_${n}` };
  const start = stripeEvent(
    "checkout.session.completed",
    checkoutSession({
      accountId: account.accountId,
      customer: ids.customer,
      purchase: plan,
      subscription: ids.subscription,
    }),
    created,
  );
  expect((await deliver(start)).body).toEqual({ received: true, outcome: "applied" });
  return { account, ...ids };
}

describe("who may call the webhook", () => {
  it("refuses a forged, missing, stale or mismatched signature and changes nothing", async () => {
    const account = await createAccount();
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ accountId: account.accountId, customer: "cus_forged", purchase: "pack" }),
    );
    const body = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);
    const refusals = [
      signatureFor(body, "whsec_someone_else"),
      null,
      "t=1,v1=deadbeef",
      signatureFor(body, undefined, now - 3600),
      signatureFor(body.replace('"paid"', '"unpaid"')),
    ];
    for (const signature of refusals) {
      const answer = await deliver(body, { signature });
      expect(answer.status, `signature ${signature}`).toBe(400);
      expect(answer.body).toMatchObject({
        name: "BadRequest",
        code: 400,
        className: "bad-request",
        data: { name: "InvalidRequest" },
      });
    }
    expect(await recorded(event.id)).toBeNull();
    expect(await balancesAndLedger(account.accountId)).toMatchObject({ plan: 60, pack: 0 });

    // The same body, signed with the right secret, is accepted: only the signature was wrong.
    expect((await deliver(body)).body).toEqual({ received: true, outcome: "applied" });
    expect(await balancesAndLedger(account.accountId)).toMatchObject({ plan: 60, pack: 500 });
  });

  it("refuses a body over 256 KiB before reading it, however it is signed", async () => {
    const account = await createAccount();
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ accountId: account.accountId, customer: "cus_big", purchase: "pack" }),
    );
    const body = JSON.stringify({ ...event, padding: "x".repeat(256 * 1024) });
    const answer = await deliver(body);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain("larger than 256 KiB");
    expect(await recorded(event.id)).toBeNull();
  });

  it("answers 503 while no webhook secret is configured, so Stripe retries", async () => {
    const account = await createAccount();
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({ accountId: account.accountId, customer: "cus_x", purchase: "pack" }),
    );
    const answer = await deliver(event, { env: stripeEnv({ STRIPE_WEBHOOK_SECRET: "" }) });
    expect(answer.status).toBe(503);
    expect(answer.body.data.name).toBe("ServiceUnavailable");
    expect(await recorded(event.id)).toBeNull();
  });

  it("refuses a signed event whose object is not the shape it claims, and records nothing", async () => {
    const account = await createAccount();
    const event = stripeEvent("customer.subscription.updated", {
      id: "sub_broken",
      customer: "cus_broken",
      metadata: { account_id: account.accountId },
    });
    const answer = await deliver(event);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain("data.object.status");
    expect(await recorded(event.id)).toBeNull();
  });

  it("acknowledges other event types and unknown customers without changing anything", async () => {
    const other = stripeEvent("customer.created", { id: "cus_new", object: "customer" });
    expect((await deliver(other)).body).toEqual({ received: true, outcome: "ignored" });
    expect(await recorded(other.id)).toBeNull();

    const stranger = stripeEvent(
      "customer.subscription.updated",
      subscription({
        id: "sub_stranger",
        accountId: crypto.randomUUID(),
        customer: "cus_stranger",
        price: PRICES.pro,
      }),
    );
    expect((await deliver(stranger)).body).toEqual({ received: true, outcome: "ignored" });
    expect(await recorded(stranger.id)).toEqual({
      id: stranger.id,
      type: "customer.subscription.updated",
      account_id: null,
    });
    expect((await deliver(stranger)).body.outcome).toBe("duplicate");
  });
});

describe("purchases", () => {
  it("a paid plan Checkout starts the plan with its credits, shown in /v1/usage, once", async () => {
    const account = await createAccount();
    const event = stripeEvent(
      "checkout.session.completed",
      checkoutSession({
        accountId: account.accountId,
        customer: "cus_start",
        purchase: "starter",
        subscription: "sub_start",
      }),
      1_800_000_000,
    );
    expect((await deliver(event)).body.outcome).toBe("applied");
    expect((await deliver(event)).body.outcome).toBe("duplicate");

    expect(await subscriptionOf(account.accountId)).toEqual({
      plan: "starter",
      subscription_status: "active",
      cancel_at_period_end: 0,
      stripe_customer_id: "cus_start",
      stripe_subscription_id: "sub_start",
      period_start: "2027-01-15T08:00:00.000Z",
      period_end: "2027-02-15T08:00:00.000Z",
      subscription_event_at: 1_800_000_000,
    });
    expect(await ledgerKinds(account.accountId)).toEqual([
      { kind: "grant", plan_delta: 60, pack_delta: 0 },
      { kind: "plan-start", plan_delta: 1440, pack_delta: 0 },
    ]);
    await expectLedgerMatches(account.accountId);
    const body = await usage(account);
    expect(body.plan).toBe("starter");
    expect(body.credits).toEqual({ available: 1500, plan: 1500, pack: 0, monthly_allowance: 1500 });
    expect(body.subscription).toEqual({ status: "active", cancel_at_period_end: false });
  });

  it("a pack adds 500 pack credits once, whichever events carry its session", async () => {
    const account = await createAccount();
    const session = checkoutSession({
      accountId: account.accountId,
      customer: "cus_pack",
      purchase: "pack",
    });
    // Paid by a delayed method: completed unpaid, then async_payment_succeeded (twice).
    const pending = stripeEvent("checkout.session.completed", {
      ...session,
      payment_status: "unpaid",
    });
    expect((await deliver(pending)).body.outcome).toBe("ignored");
    expect(await balancesAndLedger(account.accountId)).toMatchObject({ plan: 60, pack: 0 });

    const paid = stripeEvent("checkout.session.async_payment_succeeded", session);
    expect((await deliver(paid)).body.outcome).toBe("applied");
    expect((await deliver(paid)).body.outcome).toBe("duplicate");
    // Another event for the same session (as if completed had said paid) pays nothing more.
    const again = stripeEvent("checkout.session.completed", session);
    expect((await deliver(again)).body.outcome).toBe("duplicate");
    expect((await deliver(again)).body.outcome).toBe("duplicate");

    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 60, pack: 500 });
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "free",
      subscription_status: null,
      stripe_customer_id: "cus_pack",
    });
    const body = await usage(account);
    expect(body.credits).toEqual({ available: 560, plan: 60, pack: 500, monthly_allowance: 60 });
    expect(body.subscription).toBeNull();
  });
});

describe("a subscription's life", () => {
  it("renews once per invoice: plan credits reset, the period moves on", async () => {
    const { account, subscription: sub, customer } = await subscribed("pro");
    const period = { periodStart: 1_802_592_000, periodEnd: 1_802_592_000 + 30 * DAY };
    const paid = invoice({ subscription: sub, customer, ...period });
    const renewal = stripeEvent("invoice.paid", paid, 1_802_592_100);
    expect((await deliver(renewal)).body.outcome).toBe("applied");
    expect((await deliver(renewal)).body.outcome).toBe("duplicate");
    // The same invoice in another event (Stripe resends under a new id) renews nothing more.
    expect((await deliver(stripeEvent("invoice.paid", paid, 1_802_592_200))).body.outcome).toBe(
      "duplicate",
    );
    // Invoices that are not renewals (the first one, prorations) change no credits.
    for (const reason of ["subscription_create", "subscription_update"]) {
      const other = invoice({ subscription: sub, customer, billingReason: reason, ...period });
      expect((await deliver(stripeEvent("invoice.paid", other))).body.outcome).toBe("ignored");
    }
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "pro",
      period_start: "2027-02-14T08:00:00.000Z",
      period_end: "2027-03-16T08:00:00.000Z",
    });
    const kinds = (await ledgerKinds(account.accountId)).map((row) => row.kind);
    expect(kinds.filter((kind) => kind === "renewal")).toHaveLength(1);
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 5000, pack: 0 });
  });

  it("reads events from an endpoint pinned to an API version before 2025-03-31", async () => {
    const { account, subscription: sub, customer } = await subscribed("starter");
    const { parent: _parent, ...legacyInvoice } = invoice({
      subscription: sub,
      customer,
      periodStart: 1_802_592_000,
      periodEnd: 1_805_184_000,
    });
    const renewal = stripeEvent("invoice.paid", { ...legacyInvoice, subscription: sub });
    const current = subscription({
      id: sub,
      accountId: account.accountId,
      customer,
      price: PRICES.pro,
    });
    const legacySubscription = {
      ...current,
      current_period_start: 1_802_592_000,
      current_period_end: 1_805_184_000,
      items: { data: [{ price: { id: PRICES.pro } }] },
    };
    expect((await deliver(renewal)).body.outcome).toBe("applied");
    const update = stripeEvent("customer.subscription.updated", legacySubscription, 1_802_600_000);
    expect((await deliver(update)).body.outcome).toBe("applied");
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "pro",
      period_start: "2027-02-14T08:00:00.000Z",
      period_end: "2027-03-16T08:00:00.000Z",
    });
    expect((await ledgerKinds(account.accountId)).map((row) => row.kind)).toEqual([
      "grant",
      "plan-start",
      "renewal",
      "plan-change",
    ]);
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 5000 });
  });

  it("changes plan up and down, cancels at period end, fails a payment, ends on free", async () => {
    const { account, subscription: sub, customer } = await subscribed("starter");
    const state = (price: string, created: number, extra = {}) =>
      stripeEvent(
        "customer.subscription.updated",
        subscription({ id: sub, accountId: account.accountId, customer, price, ...extra }),
        created,
      );

    // Upgrade: the difference of the allowances is added.
    expect((await deliver(state(PRICES.pro, 1_800_000_100))).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 5000 });
    expect((await usage(account)).plan).toBe("pro");

    // Downgrade: at most the new allowance is kept.
    expect((await deliver(state(PRICES.starter, 1_800_000_200))).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 1500 });
    expect((await usage(account)).plan).toBe("starter");

    // Cancel at period end: the plan stays until Stripe ends the subscription.
    const cancel = state(PRICES.starter, 1_800_000_300, { cancelAtPeriodEnd: true });
    expect((await deliver(cancel)).body.outcome).toBe("applied");
    let body = await usage(account);
    expect(body.plan).toBe("starter");
    expect(body.subscription).toEqual({ status: "active", cancel_at_period_end: true });

    const failed = stripeEvent(
      "invoice.payment_failed",
      invoice({ subscription: sub, customer, periodStart: 1, periodEnd: 2 }),
      1_800_000_400,
    );
    expect((await deliver(failed)).body.outcome).toBe("applied");
    body = await usage(account);
    expect(body.subscription).toEqual({ status: "past_due", cancel_at_period_end: true });
    expect(body.credits.plan).toBe(1500);

    const ended = stripeEvent(
      "customer.subscription.deleted",
      subscription({
        id: sub,
        accountId: account.accountId,
        customer,
        price: PRICES.starter,
        status: "canceled",
        endedAt: 1_802_592_000,
      }),
      1_802_592_000,
    );
    expect((await deliver(ended)).body.outcome).toBe("applied");
    expect((await deliver(ended)).body.outcome).toBe("duplicate");
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "free",
      subscription_status: "canceled",
      cancel_at_period_end: 0,
      stripe_subscription_id: null,
      stripe_customer_id: customer,
      period_start: "2027-02-14T08:00:00.000Z",
      period_end: "2027-03-14T08:00:00.000Z",
    });
    body = await usage(account);
    expect(body.plan).toBe("free");
    expect(body.credits).toMatchObject({ plan: 60, monthly_allowance: 60 });
    expect(body.subscription).toEqual({ status: "canceled", cancel_at_period_end: false });
    expect((await ledgerKinds(account.accountId)).map((row) => row.kind)).toEqual([
      "grant",
      "plan-start",
      "plan-change",
      "plan-change",
      "back-to-free",
    ]);
    await expectLedgerMatches(account.accountId);
  });

  it("does not move the plan for a subscription that is not paid for", async () => {
    const account = await createAccount();
    const pending = (status: string, created: number) =>
      stripeEvent(
        "customer.subscription.created",
        subscription({
          id: "sub_pending",
          accountId: account.accountId,
          customer: "cus_pending",
          price: PRICES.scale,
          status,
        }),
        created,
      );
    expect((await deliver(pending("incomplete", 1_800_000_000))).body.outcome).toBe("applied");
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "free",
      subscription_status: "incomplete",
      stripe_subscription_id: "sub_pending",
    });
    // It expires unpaid: the account lets go of it (the cron renews its free credits again).
    expect((await deliver(pending("incomplete_expired", 1_800_090_000))).body.outcome).toBe(
      "applied",
    );
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "free",
      subscription_status: "incomplete_expired",
      stripe_subscription_id: null,
    });
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 60 });
  });
});

describe("events out of order", () => {
  it("an older update arriving after a newer one changes nothing", async () => {
    const { account, subscription: sub, customer } = await subscribed("starter");
    const older = stripeEvent(
      "customer.subscription.updated",
      subscription({
        id: sub,
        accountId: account.accountId,
        customer,
        price: PRICES.starter,
        cancelAtPeriodEnd: true,
      }),
      1_800_000_100,
    );
    const newer = stripeEvent(
      "customer.subscription.updated",
      subscription({ id: sub, accountId: account.accountId, customer, price: PRICES.pro }),
      1_800_000_200,
    );
    await deliver(newer);
    await deliver(older);
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "pro",
      cancel_at_period_end: 0,
      subscription_event_at: 1_800_000_200,
    });
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 5000 });
  });

  it("a late update never revives an ended subscription", async () => {
    const { account, subscription: sub, customer } = await subscribed("scale");
    const item = { id: sub, accountId: account.accountId, customer, price: PRICES.scale };
    await deliver(
      stripeEvent(
        "customer.subscription.deleted",
        subscription({ ...item, status: "canceled", endedAt: 1_800_500_000 }),
        1_800_500_000,
      ),
    );
    await deliver(stripeEvent("customer.subscription.updated", subscription(item), 1_800_400_000));
    await deliver(
      stripeEvent(
        "invoice.payment_failed",
        invoice({ subscription: sub, customer, periodStart: 1, periodEnd: 2 }),
        1_800_450_000,
      ),
    );
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "free",
      subscription_status: "canceled",
      stripe_subscription_id: null,
    });
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 60 });
  });

  it("every delivery order of one subscription's events, with replays, ends in one state", async () => {
    const t = 1_800_000_000;
    const script = (accountId: string, n: number): StripeEventFixture[] => {
      const ids = { id: `sub_perm_${n}`, accountId, customer: `cus_perm_${n}` };
      const next = { periodStart: t + 30 * DAY, periodEnd: t + 60 * DAY };
      return [
        stripeEvent(
          "checkout.session.completed",
          checkoutSession({
            accountId,
            customer: ids.customer,
            purchase: "starter",
            subscription: ids.id,
          }),
          t,
        ),
        stripeEvent(
          "customer.subscription.created",
          subscription({ ...ids, price: PRICES.starter }),
          t,
        ),
        stripeEvent(
          "customer.subscription.updated",
          subscription({ ...ids, price: PRICES.pro }),
          t + DAY,
        ),
        stripeEvent(
          "invoice.payment_failed",
          invoice({ subscription: ids.id, customer: ids.customer, ...next }),
          t + 30 * DAY,
        ),
        stripeEvent(
          "invoice.paid",
          invoice({ subscription: ids.id, customer: ids.customer, ...next }),
          t + 30 * DAY + 3600,
        ),
        stripeEvent(
          "customer.subscription.updated",
          subscription({ ...ids, price: PRICES.pro, cancelAtPeriodEnd: true, ...next }),
          t + 31 * DAY,
        ),
      ];
    };
    const finalState = async (accountId: string) => ({
      ...(await subscriptionOf(accountId)),
      stripe_customer_id: undefined,
      stripe_subscription_id: undefined,
      balances: await expectLedgerMatches(accountId),
    });

    const inOrder = await createAccount();
    for (const event of script(inOrder.accountId, 0)) await deliver(event);
    const expected = await finalState(inOrder.accountId);
    expect(expected).toMatchObject({
      plan: "pro",
      subscription_status: "active",
      cancel_at_period_end: 1,
      period_end: new Date((t + 60 * DAY) * 1000).toISOString(),
      balances: { plan: 5000, pack: 0 },
    });

    let seed = 20261123;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 1; n <= 12; n++) {
      const account = await createAccount();
      const events = script(account.accountId, n);
      const order = events
        .map((event) => ({ event, key: random() }))
        .sort((a, b) => a.key - b.key)
        .map(({ event }) => event);
      // Stripe may deliver any of them again, at any point.
      const deliveries = order.flatMap((event) => (random() < 0.4 ? [event, event] : [event]));
      deliveries.push(order[Math.floor(random() * order.length)]);
      for (const event of deliveries) expect((await deliver(event)).status).toBe(200);
      expect(
        await finalState(account.accountId),
        `order ${order.map((e) => events.indexOf(e)).join(",")}`,
      ).toEqual(expected);
    }
  });
});

/**
 * Spends `credits` plan credits as a settled job would: one ledger entry and the same change
 * to the balance, so the ledger still sums to the balances.
 */
async function spend(accountId: string, credits: number) {
  const entryId = `test-spend:${crypto.randomUUID()}`;
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note) VALUES (?, ?, 'charge', ?, 'test spend')",
    ).bind(entryId, accountId, -credits),
    env.DB.prepare("UPDATE accounts SET plan_credits = plan_credits - ? WHERE id = ?").bind(
      credits,
      accountId,
    ),
  ]);
}

describe("what a period grants", () => {
  it("switching plans back and forth grants the higher allowance once per period", async () => {
    const { account, subscription: sub, customer } = await subscribed("starter");
    const state = (price: string, created: number) =>
      stripeEvent(
        "customer.subscription.updated",
        subscription({ id: sub, accountId: account.accountId, customer, price }),
        created,
      );
    let t = 1_800_000_000;
    /** Stripe's clock: each change is stamped a minute after the one before. */
    const next = () => {
      t += 60;
      return t;
    };
    expect((await deliver(state(PRICES.pro, next()))).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 5000 });
    await spend(account.accountId, 3499);
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 1501 });

    // Two round trips: down keeps at most 1500, up again grants nothing more this period.
    for (let trip = 0; trip < 2; trip++) {
      expect((await deliver(state(PRICES.starter, next()))).body.outcome).toBe("applied");
      expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 1500 });
      expect((await deliver(state(PRICES.pro, next()))).body.outcome).toBe("applied");
      expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 1500 });
      expect((await usage(account)).plan).toBe("pro");
    }
    // Scale was never granted this period: an upgrade to it adds 25000 − 5000.
    expect((await deliver(state(PRICES.scale, next()))).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 21_500 });
    expect((await deliver(state(PRICES.starter, next()))).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 1500 });

    // A renewal starts a new period: starter's allowance, and an upgrade adds the difference.
    const renewal = invoice({
      subscription: sub,
      customer,
      periodStart: t + 30 * DAY,
      periodEnd: t + 60 * DAY,
    });
    expect((await deliver(stripeEvent("invoice.paid", renewal, t + 30 * DAY))).body.outcome).toBe(
      "applied",
    );
    await spend(account.accountId, 1000);
    expect((await deliver(state(PRICES.pro, t + 31 * DAY))).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 4000 });
    expect(
      (await ledgerKinds(account.accountId)).filter((row) => row.kind === "plan-change"),
    ).toEqual([
      { kind: "plan-change", plan_delta: 3500, pack_delta: 0 },
      { kind: "plan-change", plan_delta: -1, pack_delta: 0 },
      { kind: "plan-change", plan_delta: 0, pack_delta: 0 },
      { kind: "plan-change", plan_delta: 0, pack_delta: 0 },
      { kind: "plan-change", plan_delta: 0, pack_delta: 0 },
      { kind: "plan-change", plan_delta: 20_000, pack_delta: 0 },
      { kind: "plan-change", plan_delta: -20_000, pack_delta: 0 },
      { kind: "plan-change", plan_delta: 3500, pack_delta: 0 },
    ]);
  });

  it("a plan start that arrives after the subscription's own event grants nothing more", async () => {
    const t = 1_800_000_000;
    // The late Checkout event is older than the subscription's event (stale), or just as old.
    for (const checkoutAt of [t - 5, t]) {
      const account = await createAccount();
      const n = crypto.randomUUID().slice(0, 8);
      const ids = { id: `sub_late_${n}`, accountId: account.accountId, customer: `cus_late_${n}` };
      const created = stripeEvent(
        "customer.subscription.created",
        subscription({ ...ids, price: PRICES.pro }),
        t,
      );
      expect((await deliver(created)).body.outcome).toBe("applied");
      expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 5000 });
      await spend(account.accountId, 4000);

      const checkout = stripeEvent(
        "checkout.session.completed",
        checkoutSession({ ...ids, purchase: "pro", subscription: ids.id }),
        checkoutAt,
      );
      expect((await deliver(checkout)).body.outcome).toBe("applied");
      expect(
        await expectLedgerMatches(account.accountId),
        `checkout at ${checkoutAt}`,
      ).toMatchObject({ plan: 1000 });
      expect(await subscriptionOf(account.accountId)).toMatchObject({
        plan: "pro",
        subscription_status: "active",
        stripe_subscription_id: ids.id,
      });
      expect((await usage(account)).credits).toMatchObject({ plan: 1000, monthly_allowance: 5000 });
    }
  });

  it("a plan start before the subscription's event starts the period; the event adds nothing", async () => {
    const { account, subscription: sub, customer } = await subscribed("pro");
    await spend(account.accountId, 4000);
    const created = stripeEvent(
      "customer.subscription.created",
      subscription({ id: sub, accountId: account.accountId, customer, price: PRICES.pro }),
      1_800_000_001,
    );
    expect((await deliver(created)).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 1000 });
  });
});

describe("a subscription that stops paying", () => {
  it("unpaid, paused or expired: back on free, renewed by the cron on free; paid again: the plan anew", async () => {
    for (const status of ["unpaid", "paused", "incomplete_expired"]) {
      const { account, subscription: sub, customer } = await subscribed("pro");
      const item = { id: sub, accountId: account.accountId, customer, price: PRICES.pro };
      await spend(account.accountId, 1000);
      const stopped = stripeEvent(
        "customer.subscription.updated",
        subscription({ ...item, status }),
        1_802_700_000,
      );
      expect((await deliver(stopped)).body.outcome).toBe("applied");
      const stoppedAt = new Date(1_802_700_000 * 1000);
      expect(await subscriptionOf(account.accountId), status).toMatchObject({
        plan: "free",
        subscription_status: status,
        // Unpaid and paused may be paid again (the portal, not a second Checkout).
        stripe_subscription_id: status === "incomplete_expired" ? null : sub,
        period_start: stoppedAt.toISOString(),
        period_end: addMonth(stoppedAt).toISOString(),
      });
      expect(await expectLedgerMatches(account.accountId), status).toMatchObject({ plan: 60 });
      const body = await usage(account);
      expect(body.plan).toBe("free");
      expect(body.credits).toMatchObject({ plan: 60, monthly_allowance: 60 });

      // The cron renews it at the period end: the free allowance, not pro's 5000.
      await spend(account.accountId, 50);
      await renewPlanCredits(env, addMonth(stoppedAt).getTime() + 1000);
      expect(await expectLedgerMatches(account.accountId), status).toMatchObject({ plan: 60 });
      expect((await subscriptionOf(account.accountId))?.plan).toBe("free");

      if (status === "incomplete_expired") continue;
      // Paid again: the subscription's active event starts the plan with its allowance.
      await spend(account.accountId, 30);
      const resumed = stripeEvent(
        "customer.subscription.updated",
        subscription({ ...item, status: "active" }),
        1_806_000_000,
      );
      expect((await deliver(resumed)).body.outcome).toBe("applied");
      expect(await subscriptionOf(account.accountId)).toMatchObject({
        plan: "pro",
        subscription_status: "active",
      });
      expect(await expectLedgerMatches(account.accountId), status).toMatchObject({ plan: 5000 });
    }
  });

  it("an invoice paid while unpaid leaves the plan to the subscription's active event", async () => {
    const { account, subscription: sub, customer } = await subscribed("pro");
    const item = { id: sub, accountId: account.accountId, customer, price: PRICES.pro };
    const unpaid = stripeEvent(
      "customer.subscription.updated",
      subscription({ ...item, status: "unpaid" }),
      1_802_700_000,
    );
    // Stripe stamps the active event before the invoice event, and delivers it last.
    const active = stripeEvent("customer.subscription.updated", subscription(item), 1_802_800_000);
    const paid = stripeEvent(
      "invoice.paid",
      invoice({
        subscription: sub,
        customer,
        periodStart: 1_802_592_000,
        periodEnd: 1_805_184_000,
      }),
      1_802_800_005,
    );
    for (const event of [unpaid, paid, active]) {
      expect((await deliver(event)).body.outcome).toBe("applied");
    }
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "pro",
      subscription_status: "active",
    });
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 5000 });
  });

  it("an account still on free keeps its credits when a subscription that never paid ends", async () => {
    const account = await createAccount();
    await spend(account.accountId, 50);
    const item = {
      id: `sub_never_${crypto.randomUUID().slice(0, 8)}`,
      accountId: account.accountId,
      customer: "cus_never",
      price: PRICES.pro,
    };
    const before = await subscriptionOf(account.accountId);
    const events = [
      stripeEvent(
        "customer.subscription.created",
        subscription({ ...item, status: "incomplete" }),
        1_800_000_000,
      ),
      stripeEvent(
        "customer.subscription.deleted",
        subscription({ ...item, status: "canceled", endedAt: 1_800_090_000 }),
        1_800_090_000,
      ),
    ];
    for (const event of events) expect((await deliver(event)).body.outcome).toBe("applied");
    expect(await expectLedgerMatches(account.accountId)).toMatchObject({ plan: 10 });
    expect(await subscriptionOf(account.accountId)).toMatchObject({
      plan: "free",
      subscription_status: "canceled",
      stripe_subscription_id: null,
    });
    expect((await ledgerKinds(account.accountId)).map((row) => row.kind)).toEqual([
      "grant",
      "charge",
    ]);
    expect(before?.plan).toBe("free");
  });
});
