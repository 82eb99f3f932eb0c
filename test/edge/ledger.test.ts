// The ledger rule: every balance change is a ledger entry, so an account's plan, pack and
// reserved credits equal the sums of its entries after any sequence of purchases, renewals,
// plan changes (back and forth), subscriptions that stop paying and are paid again, cron
// renewals, admin grants, jobs (reserved and settled through the real API) and refunds (failed
// jobs releasing their hold) — and a replayed renewal resets plan credits only once. Plan
// credits never exceed the highest allowance granted in the period, and switching plans back
// and forth a second time within a period grants nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { renewPlanCredits } from "../../edge/maintenance.ts";
import { grantPackStatements, type Statement, setPlanStatements } from "../../schema/ledger.ts";
import { isPlanName, PLAN_NAMES, PLANS, type PlanName } from "../../schema/plans.ts";
import { api, createAccount, type TestAccount } from "./support/api.ts";
import {
  balancesAndLedger,
  checkoutSession,
  deliver,
  invoice,
  PRICES,
  runJob,
  type StripeEventFixture,
  stripeEvent,
  subscription,
} from "./support/stripe-stand-in.ts";

const DAY = 86_400;
/** Jobs go through the real queues: each one is a few round trips inside workerd. */
const WITH_JOBS = { timeout: 180_000 };

async function runStatements(statements: Statement[]) {
  await env.DB.batch(statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
}

async function expectLedgerSums(accountId: string, step = "") {
  const row = await balancesAndLedger(accountId);
  if (!row) throw new Error(`no account ${accountId}`);
  expect(
    { plan: row.plan, pack: row.pack, reserved: row.reserved },
    `balances equal the ledger ${step}`,
  ).toEqual({ plan: row.ledger_plan, pack: row.ledger_pack, reserved: row.ledger_reserved });
  return row;
}

/** Plan credits and the most this period may have granted (the allowance when never recorded). */
async function periodGrant(accountId: string) {
  const row = await env.DB.prepare(
    "SELECT plan, plan_credits, period_allowance_granted FROM accounts WHERE id = ?",
  )
    .bind(accountId)
    .first<{ plan: string; plan_credits: number; period_allowance_granted: number | null }>();
  if (!row || !isPlanName(row.plan)) throw new Error(`no account ${accountId}`);
  return {
    plan: row.plan_credits,
    granted: row.period_allowance_granted ?? PLANS[row.plan].monthly_credits,
  };
}

async function renewalEntries(accountId: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, plan_delta, pack_delta FROM credit_ledger WHERE account_id = ? AND kind = 'renewal'",
  )
    .bind(accountId)
    .all();
  return results;
}

describe("the issue's must-show", WITH_JOBS, () => {
  it("a replayed renewal resets plan credits once; pack credits untouched; the ledger sums", async () => {
    const account = await createAccount();
    const customer = { accountId: account.accountId, customer: "cus_must_show" };
    const t = 1_800_000_000;
    await deliver(
      stripeEvent(
        "checkout.session.completed",
        checkoutSession({ ...customer, purchase: "starter", subscription: "sub_must_show" }),
        t,
      ),
    );
    await deliver(
      stripeEvent(
        "checkout.session.completed",
        checkoutSession({ ...customer, purchase: "pack" }),
        t + 60,
      ),
    );
    expect(await expectLedgerSums(account.accountId)).toMatchObject({ plan: 1500, pack: 500 });

    // A job of 150 s costs 3 credits, taken from plan credits first.
    expect(await runJob(account, { seconds: 150 })).toEqual({ created: 201, status: "completed" });
    expect(await expectLedgerSums(account.accountId)).toMatchObject({ plan: 1497, pack: 500 });

    const renewal = stripeEvent(
      "invoice.paid",
      invoice({
        id: "in_must_show",
        subscription: "sub_must_show",
        customer: customer.customer,
        periodStart: t + 31 * DAY,
        periodEnd: t + 59 * DAY,
      }),
      t + 31 * DAY,
    );
    expect((await deliver(renewal)).body.outcome).toBe("applied");
    expect(await expectLedgerSums(account.accountId)).toMatchObject({ plan: 1500, pack: 500 });

    // Spend again, then Stripe delivers the renewal twice more: nothing is reset again.
    expect(await runJob(account, { seconds: 90 })).toEqual({ created: 201, status: "completed" });
    expect((await deliver(renewal)).body.outcome).toBe("duplicate");
    expect((await deliver(renewal)).body.outcome).toBe("duplicate");
    const after = await expectLedgerSums(account.accountId);
    expect(after).toMatchObject({ plan: 1498, pack: 500, reserved: 0 });

    expect(await renewalEntries(account.accountId)).toEqual([
      { id: "stripe:renewal:in_must_show", plan_delta: 3, pack_delta: 0 },
    ]);
    const usage = await api("GET", "/v1/usage", { headers: account.auth });
    expect(usage.body.credits).toEqual({
      available: 1998,
      plan: 1498,
      pack: 500,
      monthly_allowance: 1500,
    });
    expect(usage.body.recent_ledger[0]).toMatchObject({ kind: "charge", plan_delta: -2 });
  });
});

describe("balances equal the sum of the ledger", WITH_JOBS, () => {
  it("after a random sequence of purchases, renewals, changes, grants, jobs and refunds", async () => {
    // mulberry32: a fixed seed gives the same sequence on every run.
    let seed = 20_261_123;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const paidPlans = PLAN_NAMES.filter(
      (plan): plan is Exclude<PlanName, "free"> => plan !== "free",
    );

    const account: TestAccount = await createAccount();
    const customer = `cus_seq_${crypto.randomUUID().slice(0, 8)}`;
    let clock = 1_800_000_000;
    /** Stripe's clock: every event is stamped later than the one before. */
    const tick = (seconds = 60) => {
      clock += seconds;
      return clock;
    };
    let live: { id: string; plan: Exclude<PlanName, "free">; cancel: boolean } | undefined;
    let subscriptions = 0;
    const sent: StripeEventFixture[] = [];
    const send = async (event: StripeEventFixture) => {
      sent.push(event);
      expect((await deliver(event)).status).toBe(200);
    };
    const state = (plan: Exclude<PlanName, "free">, created: number, extra: object = {}) =>
      stripeEvent(
        "customer.subscription.updated",
        subscription({
          id: live?.id ?? "sub_none",
          accountId: account.accountId,
          customer,
          price: PRICES[plan],
          cancelAtPeriodEnd: live?.cancel ?? false,
          ...extra,
        }),
        created,
      );

    const steps: Record<string, () => Promise<unknown>> = {
      async pack() {
        await send(
          stripeEvent(
            "checkout.session.completed",
            checkoutSession({ accountId: account.accountId, customer, purchase: "pack" }),
            tick(),
          ),
        );
      },
      async subscribe() {
        if (live) return;
        live = { id: `sub_seq_${++subscriptions}`, plan: pick(paidPlans), cancel: false };
        await send(
          stripeEvent(
            "checkout.session.completed",
            checkoutSession({
              accountId: account.accountId,
              customer,
              purchase: live.plan,
              subscription: live.id,
            }),
            tick(),
          ),
        );
      },
      async change() {
        if (!live) return;
        live.plan = pick(paidPlans);
        await send(state(live.plan, tick()));
      },
      async cancel() {
        if (!live) return;
        live.cancel = !live.cancel;
        await send(state(live.plan, tick()));
      },
      async renew() {
        if (!live) return;
        tick(30 * DAY);
        await send(
          stripeEvent(
            "invoice.paid",
            invoice({
              subscription: live.id,
              customer,
              periodStart: clock,
              periodEnd: clock + 30 * DAY,
            }),
            clock,
          ),
        );
      },
      async failPayment() {
        if (!live) return;
        await send(
          stripeEvent(
            "invoice.payment_failed",
            invoice({ subscription: live.id, customer, periodStart: clock, periodEnd: clock + 1 }),
            tick(),
          ),
        );
      },
      async end() {
        if (!live) return;
        const ended = live;
        live = undefined;
        await send(
          stripeEvent(
            "customer.subscription.deleted",
            subscription({
              id: ended.id,
              accountId: account.accountId,
              customer,
              price: PRICES[ended.plan],
              status: "canceled",
              endedAt: clock + 60,
            }),
            tick(),
          ),
        );
      },
      async switchBack() {
        // Away and back, twice: the first round trip may grant (an upgrade is paid for), the
        // second one grants nothing at any point, so it never lifts plan credits.
        if (!live) await steps.subscribe();
        if (!live) return;
        const home = live.plan;
        const away = pick(paidPlans.filter((plan) => plan !== home));
        for (const plan of [away, home]) await send(state(plan, tick()));
        const before = (await periodGrant(account.accountId)).plan;
        for (const plan of [away, home]) {
          await send(state(plan, tick()));
          const now = (await periodGrant(account.accountId)).plan;
          expect(now, `${home} → ${away} → ${home}, again: at ${plan}`).toBeLessThanOrEqual(before);
        }
      },
      async stopPaying() {
        // Retries exhausted, or a trial ended without a payment method; a later step's
        // active event (change, cancel, switchBack) is the subscription paid again.
        if (!live) await steps.subscribe();
        if (!live) return;
        await send(state(live.plan, tick(), { status: pick(["unpaid", "paused"]) }));
      },
      async cron() {
        tick(31 * DAY);
        await renewPlanCredits(env, clock * 1000);
      },
      async late() {
        // An update Stripe sent earlier that arrives only now.
        if (live) await send(state(pick(paidPlans), clock - 3600));
      },
      async replay() {
        if (sent.length > 0) expect((await deliver(pick(sent))).body.outcome).toBe("duplicate");
      },
      async adminPlan() {
        await runStatements(
          setPlanStatements({
            entryId: `admin-plan:${crypto.randomUUID()}`,
            accountId: account.accountId,
            plan: pick(PLAN_NAMES),
          }),
        );
      },
      async adminPack() {
        await runStatements(
          grantPackStatements({
            entryId: `admin-pack:${crypto.randomUUID()}`,
            accountId: account.accountId,
            credits: 500 * (1 + Math.floor(random() * 3)),
          }),
        );
      },
      async job() {
        const run = await runJob(account, { seconds: 1 + Math.floor(random() * 180) });
        expect(run.status ?? "refused: 402").toMatch(/^(completed|refused: 402)$/);
      },
      async refund() {
        const run = await runJob(account, { fail: true });
        expect(run.status ?? "refused: 402").toMatch(/^(failed|refused: 402)$/);
      },
    };

    const names = Object.keys(steps);
    const done: string[] = [];
    for (let i = 0; i < 60; i++) {
      // Jobs take a queue round trip; keep them to about a quarter of the steps.
      const name = random() < 0.25 ? pick(["job", "job", "refund"]) : pick(names);
      await steps[name]();
      done.push(name);
      const row = await expectLedgerSums(account.accountId, `after ${done.join(" → ")}`);
      expect(row.plan).toBeGreaterThanOrEqual(0);
      expect(row.pack).toBeGreaterThanOrEqual(0);
      expect(row.reserved).toBe(0);
      const period = await periodGrant(account.accountId);
      expect(
        period.plan,
        `plan credits within the period's grant ${done.join(" → ")}`,
      ).toBeLessThanOrEqual(period.granted);
    }
    // The sequence exercised what it claims to.
    for (const kind of [
      "job",
      "refund",
      "pack",
      "subscribe",
      "renew",
      "switchBack",
      "stopPaying",
    ]) {
      expect(done, `the sequence includes ${kind}`).toContain(kind);
    }
    const { results } = await env.DB.prepare(
      "SELECT DISTINCT kind FROM credit_ledger WHERE account_id = ? ORDER BY kind",
    )
      .bind(account.accountId)
      .all<{ kind: string }>();
    expect(results.map((row) => row.kind)).toEqual(
      expect.arrayContaining([
        ...["charge", "release", "reserve", "renewal", "pack", "plan-start", "plan-change"],
        "back-to-free",
      ]),
    );
  });
});
