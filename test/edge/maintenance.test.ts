// The cron run's credit renewal: plan credits back to the allowance once per period, pack
// credits untouched, one ledger entry, and a second run for the same period changes nothing.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { renewPlanCredits } from "../../edge/maintenance.ts";
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
