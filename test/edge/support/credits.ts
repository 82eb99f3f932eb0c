// Credit helpers for tests: balances set through the ledger, and the check that the ledger
// sums to the balance.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { balanceOf } from "./api.ts";

/** Sets the plan credits through a ledger entry, so the ledger keeps summing to the balance. */
export async function setPlanCredits(accountId: string, credits: number) {
  const id = `test-adjust:${crypto.randomUUID()}`;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
       SELECT ?1, id, 'adjust', ?2 - plan_credits, 'set by the test' FROM accounts WHERE id = ?3`,
    ).bind(id, credits, accountId),
    env.DB.prepare(
      `UPDATE accounts SET plan_credits = plan_credits +
         (SELECT plan_delta FROM credit_ledger WHERE id = ?1) WHERE id = ?2`,
    ).bind(id, accountId),
  ]);
}

export async function expectLedgerSumsToBalance(accountId: string) {
  const sums = await env.DB.prepare(
    `SELECT sum(plan_delta) AS plan, sum(pack_delta) AS pack, sum(reserved_delta) AS reserved
     FROM credit_ledger WHERE account_id = ?`,
  )
    .bind(accountId)
    .first();
  expect(sums).toEqual(await balanceOf(accountId));
}
