// Every balance change that is not a job's: plans set by hand, plans bought, renewed, changed
// and ended through Stripe, and packs. One definition, run on D1 by the worker (Stripe's
// webhook) and through `wrangler d1 execute` by the admin command (toSqlScript).
//
// Each change is a credit_ledger row plus the same change applied to the account, in one batch.
// The row's delta is computed in SQL from the account as the batch sees it, and the balance is
// then moved by exactly that row, so balances always equal the sum of the ledger. Entry ids
// name their cause (a Stripe event, session or invoice id; a fresh id for admin grants): a
// second write of the same cause fails the whole batch on the primary key.
//
// Subscription state (plan, status, cancel flag, period) is written only by an event at least
// as new as the newest one applied (`subscription_event_at`), so Stripe's late deliveries
// never roll an account back.
import { addMonth, type Statement } from "./accounts.ts";
import { PLAN_NAMES, PLANS, type PlanName } from "./plans.ts";

export type { Statement };

/** SQL for the monthly allowance of the plan named by `column`. */
function allowanceOf(column: string): string {
  const cases = PLAN_NAMES.map((name) => `WHEN '${name}' THEN ${PLANS[name].monthly_credits}`);
  return `(CASE ${column} ${cases.join(" ")} ELSE ${PLANS.free.monthly_credits} END)`;
}

/** True for an event stamped `?` that is not older than the newest subscription event applied. */
const NOT_STALE = "(subscription_event_at IS NULL OR subscription_event_at <= ?)";

/** Stripe's timestamps are Unix seconds; the accounts table keeps ISO dates. */
export function isoFromUnix(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/**
 * Moves the account's balances by the ledger entry `entryId`. It moves nothing when the
 * entry was not written (its INSERT selected no row), so conditional entries stay exact.
 */
function applyEntry(entryId: string, accountId: string): Statement {
  const delta = (column: string) =>
    `coalesce((SELECT ${column} FROM credit_ledger WHERE id = ? AND account_id = ?), 0)`;
  return {
    sql: `UPDATE accounts SET
            plan_credits = plan_credits + ${delta("plan_delta")},
            pack_credits = pack_credits + ${delta("pack_delta")},
            reserved_credits = reserved_credits + ${delta("reserved_delta")}
          WHERE id = ?`,
    params: [entryId, accountId, entryId, accountId, entryId, accountId, accountId],
  };
}

export interface Entry {
  /** Unique id naming the cause (`stripe:renewal:in_…`, `admin-plan:<uuid>` …). */
  entryId: string;
  accountId: string;
  note?: string;
}

/**
 * Plan credits back to the allowance of the plan the account is on when this runs (after any
 * plan change earlier in the same batch): the entry's delta is allowance − current plan
 * credits. Pack credits are untouched. `onlyIf` is extra SQL on the accounts row.
 */
function resetPlanCredits(
  entry: Entry,
  kind: string,
  onlyIf: Statement = { sql: "1", params: [] },
): Statement[] {
  return [
    {
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT ?, id, ?, ${allowanceOf("plan")} - plan_credits,
                   coalesce(?, 'plan credits reset to the ' || plan || ' allowance')
            FROM accounts WHERE id = ? AND ${onlyIf.sql}`,
      params: [entry.entryId, kind, entry.note ?? null, entry.accountId, ...onlyIf.params],
    },
    applyEntry(entry.entryId, entry.accountId),
  ];
}

/** Admin `set-plan` (and `create-key --plan` on an existing account): plan and its allowance. */
export function setPlanStatements(entry: Entry & { plan: PlanName }): Statement[] {
  return [
    { sql: "UPDATE accounts SET plan = ? WHERE id = ?", params: [entry.plan, entry.accountId] },
    ...resetPlanCredits(
      { ...entry, note: entry.note ?? `plan set to ${entry.plan}, credits reset to its allowance` },
      "plan",
    ),
  ];
}

/** Pack credits added on top (a bought pack, admin `grant-pack`); they never expire. */
export function grantPackStatements(entry: Entry & { credits: number }): Statement[] {
  if (!Number.isInteger(entry.credits) || entry.credits <= 0) {
    throw new RangeError(`pack credits must be a positive whole number, not ${entry.credits}`);
  }
  return [
    {
      sql: `INSERT INTO credit_ledger (id, account_id, kind, pack_delta, note)
            SELECT ?, id, 'pack', ?, ? FROM accounts WHERE id = ?`,
      params: [
        entry.entryId,
        entry.credits,
        entry.note ?? `${entry.credits} pack credits`,
        entry.accountId,
      ],
    },
    applyEntry(entry.entryId, entry.accountId),
  ];
}

/** Remembers the account's Stripe customer the first time one is seen. */
export function linkCustomerStatement(accountId: string, customerId: string): Statement {
  return {
    sql: "UPDATE accounts SET stripe_customer_id = ? WHERE id = ? AND stripe_customer_id IS NULL",
    params: [customerId, accountId],
  };
}

/** Stripe statuses after which a subscription never bills again. */
const ENDED_STATUSES = ["canceled", "incomplete_expired"];

export interface SubscriptionEvent {
  accountId: string;
  subscriptionId: string;
  /** The Stripe event's `created` (Unix seconds). */
  eventAt: number;
}

/**
 * A paid Checkout of a plan: the plan starts (unless a newer subscription event already said
 * otherwise) and plan credits reset to the allowance of the plan the account is then on.
 * `entryId` is derived from the Checkout Session, so the session pays out once.
 */
export function planStartStatements(
  event: SubscriptionEvent & { plan: PlanName; entryId: string },
): Statement[] {
  const start = isoFromUnix(event.eventAt);
  return [
    {
      sql: `UPDATE accounts SET plan = ?, stripe_subscription_id = ?, subscription_status = 'active',
              cancel_at_period_end = 0, period_start = ?, period_end = ?, subscription_event_at = ?
            WHERE id = ? AND ${NOT_STALE}`,
      params: [
        event.plan,
        event.subscriptionId,
        start,
        addMonth(new Date(start)).toISOString(),
        event.eventAt,
        event.accountId,
        event.eventAt,
      ],
    },
    ...resetPlanCredits(
      {
        entryId: event.entryId,
        accountId: event.accountId,
        note: `${event.plan} subscription started: plan credits set to the allowance`,
      },
      "plan-start",
    ),
  ];
}

/**
 * A subscription's new state (created or updated): status, cancel at period end, period and,
 * while it is paid for (active or trialing), its plan. A plan change moves plan credits: an
 * upgrade adds the difference of the allowances, a downgrade keeps at most the new allowance.
 * `plan` is null when the subscription's price names none of ours.
 */
export function subscriptionStateStatements(
  event: SubscriptionEvent & {
    entryId: string;
    plan: PlanName | null;
    status: string;
    cancelAtPeriodEnd: boolean;
    periodStart: number | null;
    periodEnd: number | null;
  },
): Statement[] {
  const movesPlan =
    event.plan !== null && (event.status === "active" || event.status === "trialing");
  const plan = event.plan ?? "free";
  const newAllowance = PLANS[plan].monthly_credits;
  const oldAllowance = allowanceOf("plan");
  const period = (seconds: number | null) => (seconds === null ? null : isoFromUnix(seconds));
  // An ended subscription lets go of the account (so the cron renews its free credits again);
  // a live one is the account's subscription from now on.
  const ended = ENDED_STATUSES.includes(event.status);
  const subscriptionId = ended
    ? "CASE WHEN coalesce(stripe_subscription_id, ?) = ? THEN NULL ELSE stripe_subscription_id END"
    : "?";
  const subscriptionIdParams = ended
    ? [event.subscriptionId, event.subscriptionId]
    : [event.subscriptionId];
  const statements: Statement[] = [];
  if (movesPlan) {
    statements.push({
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT ?, id, 'plan-change',
                   CASE WHEN ? >= ${oldAllowance} THEN ? - ${oldAllowance}
                        ELSE min(plan_credits, ?) - plan_credits END,
                   'plan changed from ' || plan || ' to ' || ?
            FROM accounts WHERE id = ? AND plan <> ? AND ${NOT_STALE}`,
      params: [
        event.entryId,
        newAllowance,
        newAllowance,
        newAllowance,
        plan,
        event.accountId,
        plan,
        event.eventAt,
      ],
    });
  }
  statements.push({
    sql: `UPDATE accounts SET
            plan_credits = plan_credits +
              coalesce((SELECT plan_delta FROM credit_ledger WHERE id = ? AND account_id = ?), 0),
            plan = CASE WHEN ? THEN ? ELSE plan END,
            stripe_subscription_id = ${subscriptionId},
            subscription_status = ?, cancel_at_period_end = ?,
            period_start = coalesce(?, period_start), period_end = coalesce(?, period_end),
            subscription_event_at = ?
          WHERE id = ? AND ${NOT_STALE}`,
    params: [
      event.entryId,
      event.accountId,
      movesPlan ? 1 : 0,
      plan,
      ...subscriptionIdParams,
      event.status,
      event.cancelAtPeriodEnd ? 1 : 0,
      period(event.periodStart),
      period(event.periodEnd),
      event.eventAt,
      event.accountId,
      event.eventAt,
    ],
  });
  return statements;
}

/**
 * A paid renewal invoice (billing_reason subscription_cycle): plan credits reset to the
 * allowance, pack credits untouched, the period moves forward. `entryId` is derived from the
 * invoice, so one invoice renews once however often it is delivered.
 */
export function renewalStatements(
  event: SubscriptionEvent & { entryId: string; periodStart: number; periodEnd: number },
): Statement[] {
  const sameSubscription: Statement = {
    sql: "stripe_subscription_id = ?",
    params: [event.subscriptionId],
  };
  const start = isoFromUnix(event.periodStart);
  const end = isoFromUnix(event.periodEnd);
  return [
    ...resetPlanCredits(
      {
        entryId: event.entryId,
        accountId: event.accountId,
        note: "subscription renewed: plan credits reset to the allowance",
      },
      "renewal",
      sameSubscription,
    ),
    {
      sql: `UPDATE accounts SET period_start = ?, period_end = ?
            WHERE id = ? AND stripe_subscription_id = ? AND (period_end IS NULL OR period_end < ?)`,
      params: [start, end, event.accountId, event.subscriptionId, end],
    },
    // A paid invoice ends a past_due spell.
    {
      sql: `UPDATE accounts SET subscription_status = 'active', subscription_event_at = ?
            WHERE id = ? AND stripe_subscription_id = ? AND ${NOT_STALE}`,
      params: [event.eventAt, event.accountId, event.subscriptionId, event.eventAt],
    },
  ];
}

/** A failed invoice payment: the subscription is past_due (shown in /v1/usage); no credits. */
export function paymentFailedStatements(event: SubscriptionEvent): Statement[] {
  return [
    {
      sql: `UPDATE accounts SET subscription_status = 'past_due', subscription_event_at = ?
            WHERE id = ? AND stripe_subscription_id = ? AND ${NOT_STALE}`,
      params: [event.eventAt, event.accountId, event.subscriptionId, event.eventAt],
    },
  ];
}

/**
 * The subscription has ended (Stripe sends this at the period end of a cancelled one): the
 * account is back on the free plan with the free allowance, and a free period starts at
 * `endedAt`, renewed from then on by the cron. A deletion of a subscription the account has
 * since replaced changes nothing.
 */
export function backToFreeStatements(
  event: SubscriptionEvent & { entryId: string; endedAt: number },
): Statement[] {
  const start = isoFromUnix(event.endedAt);
  return [
    {
      sql: `UPDATE accounts SET plan = 'free', stripe_subscription_id = NULL,
              subscription_status = 'canceled', cancel_at_period_end = 0,
              period_start = ?, period_end = ?, subscription_event_at = ?
            WHERE id = ? AND coalesce(stripe_subscription_id, ?) = ? AND ${NOT_STALE}`,
      params: [
        start,
        addMonth(new Date(start)).toISOString(),
        event.eventAt,
        event.accountId,
        event.subscriptionId,
        event.subscriptionId,
        event.eventAt,
      ],
    },
    // Only when the update above took effect: the account now carries this event's stamp.
    ...resetPlanCredits(
      {
        entryId: event.entryId,
        accountId: event.accountId,
        note: "subscription ended: back to the free plan and its allowance",
      },
      "back-to-free",
      {
        sql: "plan = 'free' AND stripe_subscription_id IS NULL AND subscription_event_at = ?",
        params: [event.eventAt],
      },
    ),
  ];
}
