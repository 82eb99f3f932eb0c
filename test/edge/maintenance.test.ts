// The cron run: plan credits back to the allowance once per period (pack credits untouched,
// one ledger entry, a second run changes nothing, live Stripe subscriptions left to Stripe, a
// paid plan renewed only while set by hand), and expiry that survives R2 failures.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expireJobs, purgeExpiredSignIns, renewPlanCredits } from "../../edge/maintenance.ts";
import { addMonth } from "../../schema/accounts.ts";
import { balanceOf, createAccount } from "./support/api.ts";

it("keeps period ends inside their month", () => {
  expect(addMonth(new Date("2027-01-31T08:00:00.000Z")).toISOString()).toBe(
    "2027-02-28T08:00:00.000Z",
  );
  expect(addMonth(new Date("2028-01-31T08:00:00.000Z")).toISOString()).toBe(
    "2028-02-29T08:00:00.000Z",
  );
  expect(addMonth(new Date("2026-12-15T08:00:00.000Z")).toISOString()).toBe(
    "2027-01-15T08:00:00.000Z",
  );
});

it("renews plan credits at the end of a period, once", async () => {
  const account = await createAccount({ packCredits: 500 });
  await env.DB.prepare(
    "UPDATE accounts SET plan_credits = 10, period_start = ?, period_end = ? WHERE id = ?",
  )
    .bind("2026-09-30T12:00:00.000Z", "2026-10-31T12:00:00.000Z", account.accountId)
    .run();
  const now = Date.parse("2026-11-01T00:00:00.000Z");
  await renewPlanCredits(env, now);
  await renewPlanCredits(env, now);
  expect(await balanceOf(account.accountId)).toEqual({ plan: 60, pack: 500, reserved: 0 });
  const period = await env.DB.prepare("SELECT period_start, period_end FROM accounts WHERE id = ?")
    .bind(account.accountId)
    .first();
  expect(period).toEqual({
    period_start: "2026-10-31T12:00:00.000Z",
    period_end: "2026-11-30T12:00:00.000Z",
  });
  const { results } = await env.DB.prepare(
    "SELECT plan_delta FROM credit_ledger WHERE account_id = ? AND kind = 'renewal'",
  )
    .bind(account.accountId)
    .all();
  expect(results).toEqual([{ plan_delta: 50 }]);
});

it("leaves live subscriptions to Stripe, renews hand-set plans, and never a subscription that stopped paying", async () => {
  const periodEnd = "2026-10-31T12:00:00.000Z";
  const cases = [
    // Renewed by Stripe's invoice.paid: the cron leaves them as they are.
    { status: "active", attached: true, renewed: { plan: "starter", credits: 10 } },
    { status: "trialing", attached: true, renewed: { plan: "starter", credits: 10 } },
    { status: "past_due", attached: true, renewed: { plan: "starter", credits: 10 } },
    // A paid plan still attached to a subscription that no longer pays (as left by the code
    // before this rule): renewed on free, never with the paid allowance.
    { status: "unpaid", attached: true, renewed: { plan: "free", credits: 60 } },
    { status: "paused", attached: true, renewed: { plan: "free", credits: 60 } },
    { status: "canceled", attached: true, renewed: { plan: "free", credits: 60 } },
    { status: "incomplete_expired", attached: true, renewed: { plan: "free", credits: 60 } },
    // Set by hand (no subscription ever, or set after one ended): the operator's plan renews.
    { status: null, attached: false, renewed: { plan: "starter", credits: 1500 } },
    { status: "canceled", attached: false, renewed: { plan: "starter", credits: 1500 } },
  ];
  const accounts = [];
  for (const item of cases) {
    const account = await createAccount({ plan: "starter" });
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO credit_ledger (id, account_id, kind, plan_delta) VALUES (?, ?, 'charge', -1490)",
      ).bind(`spent:${account.accountId}`, account.accountId),
      env.DB.prepare(
        `UPDATE accounts SET plan_credits = 10, period_end = ?, stripe_subscription_id = ?,
           subscription_status = ? WHERE id = ?`,
      ).bind(
        periodEnd,
        item.attached ? `sub_${crypto.randomUUID()}` : null,
        item.status,
        account.accountId,
      ),
    ]);
    accounts.push({ ...item, id: account.accountId });
  }
  await renewPlanCredits(env, Date.parse("2026-11-01T00:00:00.000Z"));
  await renewPlanCredits(env, Date.parse("2026-11-01T00:00:00.000Z"));
  for (const item of accounts) {
    const what = `subscription ${item.status}${item.attached ? "" : ", none attached"}`;
    const row = await env.DB.prepare(
      `SELECT a.plan, a.plan_credits, a.period_allowance_granted AS granted,
              (SELECT sum(plan_delta) FROM credit_ledger WHERE account_id = a.id) AS ledger
       FROM accounts a WHERE id = ?`,
    )
      .bind(item.id)
      .first<{ plan: string; plan_credits: number; granted: number | null; ledger: number }>();
    expect({ plan: row?.plan, credits: row?.plan_credits }, what).toEqual(item.renewed);
    expect(row?.ledger, `${what}: the ledger sums to the balance`).toBe(row?.plan_credits);
    const renewedHere = item.renewed.credits !== 10;
    expect(row?.granted, what).toBe(renewedHere ? item.renewed.credits : null);
  }
});

describe("expiry when R2 fails", () => {
  async function completedJobWithFile(expiresAt: string) {
    const account = await createAccount();
    const id = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO jobs (id, account_id, status, url, source_url, platform, options, expires_at)
       VALUES (?1, ?2, 'completed', 'https://a.test/v.mp4', 'https://a.test/v.mp4', 'direct', '{}', ?3)`,
    )
      .bind(id, account.accountId, expiresAt)
      .run();
    await env.FILES.put(`job/${id}/attempt/frame-0001.jpg`, "jpeg");
    return id;
  }

  it("retries a job whose files could not be deleted on later runs, and still expires the rest", async () => {
    const now = Date.parse("2030-01-01T00:00:00.000Z");
    const stuck = await completedJobWithFile("2029-12-30T00:00:00.000Z");
    const fine = await completedJobWithFile("2029-12-31T00:00:00.000Z");
    const flaky = {
      ...env,
      FILES: {
        list: (options: R2ListOptions) => env.FILES.list(options),
        delete: async (keys: string[]) => {
          if (keys.some((k) => k.startsWith(`job/${stuck}/`))) throw new Error("R2 unavailable");
          return env.FILES.delete(keys);
        },
      },
    } as unknown as Env;
    const status = (id: string) =>
      env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(id).first("status");
    const files = async (id: string) =>
      (await env.FILES.list({ prefix: `job/${id}/` })).objects.length;

    await expireJobs(flaky, now);
    expect([await status(stuck), await files(stuck)]).toEqual(["completed", 1]);
    expect([await status(fine), await files(fine)]).toEqual(["expired", 0]);

    await expireJobs(env, now);
    expect([await status(stuck), await files(stuck)]).toEqual(["expired", 0]);
  });
});

it("purges sign-in codes and sessions past their expiry, and keeps live ones", async () => {
  const account = await createAccount();
  const now = Date.parse("2026-11-01T00:00:00.000Z");
  const before = "2026-10-31T23:59:59.000Z";
  const after = "2026-11-01T00:10:00.000Z";
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO sign_in_codes (email, code_hash, expires_at) VALUES (?1, 'h', ?2), (?3, 'h', ?4)",
    ).bind("old-code@example.com", before, "live-code@example.com", after),
    env.DB.prepare(
      "INSERT INTO sessions (token_hash, account_id, expires_at) VALUES ('purge-old', ?1, ?2), ('purge-live', ?1, ?3)",
    ).bind(account.accountId, before, after),
  ]);
  await purgeExpiredSignIns(env, now);
  const codes = await env.DB.prepare(
    "SELECT email FROM sign_in_codes WHERE email IN ('old-code@example.com', 'live-code@example.com')",
  ).all();
  expect(codes.results).toEqual([{ email: "live-code@example.com" }]);
  const sessions = await env.DB.prepare(
    "SELECT token_hash FROM sessions WHERE token_hash IN ('purge-old', 'purge-live')",
  ).all();
  expect(sessions.results).toEqual([{ token_hash: "purge-live" }]);
});
