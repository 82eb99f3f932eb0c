// The calling account's usage (spec §2 Usage): plan, live balance, limits, this period's jobs
// and the newest ledger entries. A function of its own so the MCP tools and the dashboard answer
// the same body. It takes the D1 binding, or the request's session of it (edge/storage/
// d1-sessions.ts d1Of), and the account's id; its reads are the storage modules'.
import { planOf } from "./plan-of.ts";
import { accountById } from "./storage/accounts.ts";
import type { D1Reader } from "./storage/prepared-select.ts";
import { periodTotals, recentLedgerEntries } from "./storage/usage.ts";

const RECENT_LEDGER_ENTRIES = 20;

export async function usageBody(d1: D1Reader, accountId: string) {
  // Read again rather than taken from the key check's cache, which may be seconds old. GET
  // /v1/usage reads through a replica session (edge/storage/d1-sessions.ts): with the
  // X-D1-Bookmark of the client's last write it includes that write; without, it may lag.
  const account = await accountById(d1, accountId);
  if (!account) throw new Error(`usage of an account that does not exist: ${accountId}`);
  const plan = planOf(account);
  const periodStart = account.periodStart ?? account.createdAt;
  const [period, ledger] = await Promise.all([
    periodTotals(d1, account.id, periodStart),
    recentLedgerEntries(d1, account.id, RECENT_LEDGER_ENTRIES),
  ]);
  const { max_resolution: _maxResolution, ...limits } = plan.limits;
  return {
    object: "usage" as const,
    plan: plan.name,
    credits: {
      available: Math.max(0, account.planCredits + account.packCredits - account.reservedCredits),
      plan: account.planCredits,
      pack: account.packCredits,
      monthly_allowance: plan.monthly_credits,
    },
    period: { start: account.periodStart, end: account.periodEnd },
    subscription: account.subscriptionStatus
      ? { status: account.subscriptionStatus, cancel_at_period_end: account.cancelAtPeriodEnd }
      : null,
    limits,
    this_period: { ...period, credits_reserved: account.reservedCredits },
    recent_ledger: ledger.map((entry) => ({
      id: entry.id,
      kind: entry.kind,
      job_id: entry.job_id,
      plan_delta: entry.plan_delta,
      pack_delta: entry.pack_delta,
      reserved_delta: entry.reserved_delta,
      note: entry.note,
      created_at: entry.created_at,
    })),
  };
}
