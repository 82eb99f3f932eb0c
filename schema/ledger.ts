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
//
// `period_allowance_granted` is the highest allowance granted this period. A period starts (plan
// credits reset to the allowance) at a plan start, a renewal, an admin set-plan and a return to
// free; within a period a plan change grants only what it has not granted yet, so switching
// plans back and forth, or a plan start arriving after the subscription's own event, pays once.
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

const FREE_ALLOWANCE = PLANS.free.monthly_credits;

/** SQL: the highest allowance granted this period (null: the allowance of the account's plan). */
const GRANTED = `coalesce(period_allowance_granted, ${allowanceOf("plan")})`;

/** Stripe statuses of a subscription that is paid for: only these move the account's plan. */
export const PAYING_STATUSES: readonly string[] = ["active", "trialing"];

/**
 * Stripe statuses of a subscription that still bills: Stripe's paid invoice renews the account,
 * not the cron (past_due keeps its plan while Stripe retries the payment).
 */
export const LIVE_STATUSES = [...PAYING_STATUSES, "past_due"] as const;

/**
 * Stripe statuses of a subscription that no longer pays: the account goes back to free. Unpaid
 * (retries exhausted) and paused (a trial ended without a payment method) may be paid again,
 * which starts the plan anew; canceled and incomplete_expired never bill again.
 */
const NOT_PAYING_STATUSES = ["unpaid", "paused", "incomplete_expired", "canceled"];

/** SQL: the ledger entry `?` (account `?`) was written, by an earlier statement of the batch. */
const WRITTEN = "EXISTS (SELECT 1 FROM credit_ledger WHERE id = ? AND account_id = ?)";

/**
 * SQL: the account's paid period does not belong to subscription `?` yet (it is on free, on a
 * plan set by hand, or on another subscription), so that subscription paying starts a period.
 */
const STARTS_PERIOD = "(plan = 'free' OR coalesce(stripe_subscription_id, '') <> ?)";

/**
 * SQL for the plan-credit change of a move, within the period, to a plan of `allowance`: an
 * upgrade adds what this period has not granted yet, a downgrade keeps at most the allowance.
 */
function changeWithinPeriod(allowance: number): Statement {
  return {
    sql: `(CASE WHEN ? >= ${allowanceOf("plan")} THEN max(0, ? - ${GRANTED})
                ELSE min(plan_credits, ?) - plan_credits END)`,
    params: [allowance, allowance, allowance],
  };
}

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
 * credits, and a new period's grant is that allowance. Pack credits are untouched. `onlyIf` is
 * extra SQL on the accounts row.
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
    {
      sql: `UPDATE accounts SET period_allowance_granted = ${allowanceOf("plan")}
            WHERE id = ? AND ${WRITTEN}`,
      params: [entry.accountId, entry.entryId, entry.accountId],
    },
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

/** Stripe statuses after which a subscription never bills again: the account lets go of it. */
const ENDED_STATUSES = ["canceled", "incomplete_expired"];

export interface SubscriptionEvent {
  accountId: string;
  subscriptionId: string;
  /** The Stripe event's `created` (Unix seconds). */
  eventAt: number;
}

/**
 * A paid Checkout of a plan: the plan starts, unless a newer subscription event already said
 * otherwise (then it grants nothing: that event started or ended the plan). Plan credits reset
 * to the allowance, a new period, unless the subscription's own event got here first and
 * already started its period: then only what this period has not granted yet is added.
 * `entryId` is derived from the Checkout Session, so the session pays out once.
 */
export function planStartStatements(
  event: SubscriptionEvent & { plan: PlanName; entryId: string },
): Statement[] {
  const start = isoFromUnix(event.eventAt);
  const allowance = PLANS[event.plan].monthly_credits;
  const change = changeWithinPeriod(allowance);
  return [
    // Before the state below changes the row: whether a period starts is read from the old one.
    {
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT ?, id, 'plan-start',
                   CASE WHEN ${STARTS_PERIOD} THEN ? - plan_credits ELSE ${change.sql} END,
                   CASE WHEN ${STARTS_PERIOD} THEN ? ELSE ? END
            FROM accounts WHERE id = ? AND ${NOT_STALE}`,
      params: [
        event.entryId,
        event.subscriptionId,
        allowance,
        ...change.params,
        event.subscriptionId,
        `${event.plan} subscription started: plan credits set to the allowance`,
        `${event.plan} subscription started: its allowance was partly or wholly granted already this period`,
        event.accountId,
        event.eventAt,
      ],
    },
    {
      sql: `UPDATE accounts SET plan = ?, stripe_subscription_id = ?, subscription_status = 'active',
              cancel_at_period_end = 0, period_start = ?, period_end = ?, subscription_event_at = ?,
              period_allowance_granted = CASE WHEN ${STARTS_PERIOD} THEN ? ELSE max(${GRANTED}, ?) END
            WHERE id = ? AND ${NOT_STALE}`,
      params: [
        event.plan,
        event.subscriptionId,
        start,
        addMonth(new Date(start)).toISOString(),
        event.eventAt,
        event.subscriptionId,
        allowance,
        allowance,
        event.accountId,
        event.eventAt,
      ],
    },
    applyEntry(event.entryId, event.accountId),
  ];
}

/**
 * A subscription's new state (created or updated): status, cancel at period end, period and
 * plan. While it is paid for (active or trialing) it moves the plan: the first paid state of
 * this subscription starts a period (plan credits reset to the allowance, as a plan start);
 * later an upgrade adds what this period has not granted yet and a downgrade keeps at most the
 * new allowance. Once it no longer pays (unpaid, paused, incomplete_expired, canceled) the
 * account is back on free: the free allowance and a free period from this event, as when a
 * subscription ends. `plan` is null when the subscription's price names none of ours.
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
  const movesPlan = event.plan !== null && PAYING_STATUSES.includes(event.status);
  const leavesPlan = NOT_PAYING_STATUSES.includes(event.status);
  const period = (seconds: number | null) => (seconds === null ? null : isoFromUnix(seconds));
  // An ended subscription lets go of the account (so the cron renews its free credits again);
  // a live one, or one that may be paid again, is the account's subscription from now on.
  const ended = ENDED_STATUSES.includes(event.status);
  const subscriptionId = ended
    ? "CASE WHEN coalesce(stripe_subscription_id, ?) = ? THEN NULL ELSE stripe_subscription_id END"
    : "?";
  const subscriptionIdParams = ended
    ? [event.subscriptionId, event.subscriptionId]
    : [event.subscriptionId];
  const written = [event.entryId, event.accountId];
  const statements: Statement[] = [];
  // What the plan, its grant and the period become, read from the row before this event.
  let planSql = "plan";
  let planParams: Statement["params"] = [];
  let grantedSql = "period_allowance_granted";
  let grantedParams: Statement["params"] = [];
  let periodStartSql = "coalesce(?, period_start)";
  let periodEndSql = "coalesce(?, period_end)";
  let periodParams: Statement["params"] = [period(event.periodStart), period(event.periodEnd)];
  if (event.plan !== null && movesPlan) {
    const allowance = PLANS[event.plan].monthly_credits;
    const change = changeWithinPeriod(allowance);
    statements.push({
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT ?, id,
                   CASE WHEN ${STARTS_PERIOD} THEN 'plan-start' ELSE 'plan-change' END,
                   CASE WHEN ${STARTS_PERIOD} THEN ? - plan_credits ELSE ${change.sql} END,
                   CASE WHEN ${STARTS_PERIOD}
                        THEN ? || ' subscription paid: plan credits set to the allowance'
                        ELSE 'plan changed from ' || plan || ' to ' || ? END
            FROM accounts
            WHERE id = ? AND (plan <> ? OR ${STARTS_PERIOD}) AND ${NOT_STALE}`,
      params: [
        event.entryId,
        event.subscriptionId,
        event.subscriptionId,
        allowance,
        ...change.params,
        event.subscriptionId,
        event.plan,
        event.plan,
        event.accountId,
        event.plan,
        event.subscriptionId,
        event.eventAt,
      ],
    });
    planSql = "?";
    planParams = [event.plan];
    grantedSql = `CASE WHEN ${STARTS_PERIOD} THEN ? ELSE max(${GRANTED}, ?) END`;
    grantedParams = [event.subscriptionId, allowance, allowance];
  } else if (leavesPlan) {
    const start = isoFromUnix(event.eventAt);
    statements.push({
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT ?, id, 'back-to-free', ? - plan_credits,
                   'subscription ' || ? || ': back to the free plan and its allowance'
            FROM accounts
            WHERE id = ? AND plan <> 'free' AND coalesce(stripe_subscription_id, ?) = ?
              AND ${NOT_STALE}`,
      params: [
        event.entryId,
        FREE_ALLOWANCE,
        event.status,
        event.accountId,
        event.subscriptionId,
        event.subscriptionId,
        event.eventAt,
      ],
    });
    planSql = `CASE WHEN ${WRITTEN} THEN 'free' ELSE plan END`;
    planParams = written;
    grantedSql = `CASE WHEN ${WRITTEN} THEN ? ELSE period_allowance_granted END`;
    grantedParams = [...written, FREE_ALLOWANCE];
    periodStartSql = `CASE WHEN ${WRITTEN} THEN ? ELSE coalesce(?, period_start) END`;
    periodEndSql = `CASE WHEN ${WRITTEN} THEN ? ELSE coalesce(?, period_end) END`;
    periodParams = [
      ...written,
      start,
      period(event.periodStart),
      ...written,
      addMonth(new Date(start)).toISOString(),
      period(event.periodEnd),
    ];
  }
  statements.push({
    sql: `UPDATE accounts SET
            plan_credits = plan_credits +
              coalesce((SELECT plan_delta FROM credit_ledger WHERE id = ? AND account_id = ?), 0),
            plan = ${planSql},
            period_allowance_granted = ${grantedSql},
            stripe_subscription_id = ${subscriptionId},
            subscription_status = ?, cancel_at_period_end = ?,
            period_start = ${periodStartSql}, period_end = ${periodEndSql},
            subscription_event_at = ?
          WHERE id = ? AND ${NOT_STALE}`,
    params: [
      event.entryId,
      event.accountId,
      ...planParams,
      ...grantedParams,
      ...subscriptionIdParams,
      event.status,
      event.cancelAtPeriodEnd ? 1 : 0,
      ...periodParams,
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
    // A paid invoice ends a past_due spell. An unpaid or paused subscription that is paid again
    // gets its plan back from its own `active` event, which must not look stale by then.
    {
      sql: `UPDATE accounts SET subscription_status = 'active', subscription_event_at = ?
            WHERE id = ? AND stripe_subscription_id = ? AND ${NOT_STALE}
              AND subscription_status IN (${LIVE_STATUSES.map(() => "?").join(", ")})`,
      params: [
        event.eventAt,
        event.accountId,
        event.subscriptionId,
        event.eventAt,
        ...LIVE_STATUSES,
      ],
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
 * `endedAt`, renewed from then on by the cron. An account already on free (its subscription
 * never paid, or already let go of) keeps its credits and period: ending a subscription that
 * never paid must not refill free credits. A deletion of a subscription the account has since
 * replaced changes nothing.
 */
export function backToFreeStatements(
  event: SubscriptionEvent & { entryId: string; endedAt: number },
): Statement[] {
  const start = isoFromUnix(event.endedAt);
  const ours = "coalesce(stripe_subscription_id, ?) = ?";
  const written = [event.entryId, event.accountId];
  return [
    // Before the state below changes the row: only a paid plan is left, so only it is reset.
    {
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT ?, id, 'back-to-free', ? - plan_credits,
                   'subscription ended: back to the free plan and its allowance'
            FROM accounts WHERE id = ? AND plan <> 'free' AND ${ours} AND ${NOT_STALE}`,
      params: [
        event.entryId,
        FREE_ALLOWANCE,
        event.accountId,
        event.subscriptionId,
        event.subscriptionId,
        event.eventAt,
      ],
    },
    {
      sql: `UPDATE accounts SET plan = 'free', stripe_subscription_id = NULL,
              subscription_status = 'canceled', cancel_at_period_end = 0,
              period_start = CASE WHEN ${WRITTEN} THEN ? ELSE period_start END,
              period_end = CASE WHEN ${WRITTEN} THEN ? ELSE period_end END,
              period_allowance_granted =
                CASE WHEN ${WRITTEN} THEN ? ELSE period_allowance_granted END,
              subscription_event_at = ?
            WHERE id = ? AND ${ours} AND ${NOT_STALE}`,
      params: [
        ...written,
        start,
        ...written,
        addMonth(new Date(start)).toISOString(),
        ...written,
        FREE_ALLOWANCE,
        event.eventAt,
        event.accountId,
        event.subscriptionId,
        event.subscriptionId,
        event.eventAt,
      ],
    },
    applyEntry(event.entryId, event.accountId),
  ];
}

/**
 * The cron's renewal of an account whose period ended at `periodEnd` and that no live Stripe
 * subscription renews: plan credits reset to the allowance and the next period starts. A paid
 * plan renews only while it was set by hand (no Stripe subscription attached); one still
 * attached to a subscription that stopped paying goes back to free, so an unpaid subscription
 * never renews paid credits. The conditions are checked again in the batch, so an account that
 * changed since it was selected is left alone; `entryId` names the period, so it renews once.
 */
export function periodRenewalStatements(
  entry: Entry & { periodEnd: string; nextPeriodEnd: string },
): Statement[] {
  const renewedPlan = "(CASE WHEN stripe_subscription_id IS NULL THEN plan ELSE 'free' END)";
  const live = LIVE_STATUSES.map(() => "?").join(", ");
  const written = [entry.entryId, entry.accountId];
  return [
    {
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT ?, id, 'renewal', ${allowanceOf(renewedPlan)} - plan_credits,
                   CASE WHEN ${renewedPlan} = plan THEN 'plan credits renewed for the new period'
                        ELSE 'subscription no longer paid: renewed on the free plan' END
            FROM accounts
            WHERE id = ? AND period_end = ?
              AND NOT (stripe_subscription_id IS NOT NULL
                       AND coalesce(subscription_status, '') IN (${live}))`,
      params: [entry.entryId, entry.accountId, entry.periodEnd, ...LIVE_STATUSES],
    },
    {
      sql: `UPDATE accounts SET
              plan_credits = plan_credits +
                (SELECT plan_delta FROM credit_ledger WHERE id = ? AND account_id = ?),
              plan = ${renewedPlan},
              period_allowance_granted = ${allowanceOf(renewedPlan)},
              period_start = ?, period_end = ?
            WHERE id = ? AND ${WRITTEN}`,
      params: [...written, entry.periodEnd, entry.nextPeriodEnd, entry.accountId, ...written],
    },
  ];
}
