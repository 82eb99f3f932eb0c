// An account's plan. The plan column is text (D1 has no enums), so a row written by an older
// release or by hand may name a plan that no longer exists: such an account gets the free
// plan's limits rather than none, the same rule everywhere.
import { isPlanName, PLANS, type Plan, type PlanName } from "../schema/plans.ts";

/** The plan an account (or a plan name read from a row) stands for; unknown or missing: free. */
export function planOf(account: { plan: string | null } | string | null | undefined): Plan {
  return PLANS[planNameOf(account)];
}

/** planOf's name alone, for pages that mark the current plan in a table. */
export function planNameOf(account: { plan: string | null } | string | null | undefined): PlanName {
  const name = typeof account === "string" ? account : account?.plan;
  return name && isPlanName(name) ? name : "free";
}
