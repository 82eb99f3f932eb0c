// Plan and billing: the plans and the pack (with buy buttons when Stripe is configured), the
// subscription, and the balances (the ledger itself is on the Usage page, usage.tsx).
import type { Context } from "hono";
import type { AccountRow } from "../../../schema/db.ts";
import { CREDIT_PACK, PLAN_NAMES, PLANS } from "../../../schema/plans.ts";
import { firstProblem, PurchaseFormSchema } from "../../../schema/sign-in.ts";
import { billingEnabled, openCustomerPortal, startCheckout } from "../../billing/checkout.ts";
import type { AppEnv } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { formOf } from "../../pages/forms.ts";
import { planNameOf } from "../../plan-of.ts";
import { liveAccount } from "./data.ts";
import { SubscriptionState } from "./plan-state.tsx";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, Notice, renderPage, When } from "./ui.tsx";

function PlanTable(props: { account: AccountRow; canBuy: boolean }) {
  const current = planNameOf(props.account);
  return (
    // Focusable and named: on a phone the table scrolls sideways, and a keyboard must reach it.
    <section class="table-scroll" tabindex={0} aria-label="Plans (scrolls sideways)">
      <table class="plans-table">
        <caption class="sr-only">Plans</caption>
        <thead>
          <tr>
            <th scope="col">Plan</th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Credits a month
            </th>
            <th scope="col" class="num">
              Longest video
            </th>
            <th scope="col" class="num">
              Resolution
            </th>
            <th scope="col" class="num">
              Files kept
            </th>
            {props.canBuy && (
              <th scope="col">
                <span class="sr-only">Choose</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {PLAN_NAMES.map((name) => {
            const plan = PLANS[name];
            return (
              <tr class={name === current ? "current-plan" : undefined}>
                <th scope="row">
                  <span class="plan-name">{name}</span>
                  {name === current && <span class="hint">your plan</span>}
                </th>
                <td class="num">{plan.price_usd === 0 ? "$0" : `$${plan.price_usd}/mo`}</td>
                <td class="num">{count(plan.monthly_credits)}</td>
                <td class="num">{plan.limits.max_video_minutes} min</td>
                <td class="num">{plan.limits.max_resolution}p</td>
                <td class="num">
                  {plan.limits.retention_days} {plan.limits.retention_days === 1 ? "day" : "days"}
                </td>
                {props.canBuy && (
                  <td>
                    {name !== "free" && name !== current && (
                      <form method="post" action="/dashboard/checkout">
                        <input type="hidden" name="purchase" value={name} />
                        <button type="submit" class="button-small">
                          Choose<span class="sr-only"> {name}</span>
                        </button>
                      </form>
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

async function billingPage(c: Context<AppEnv>, error?: string) {
  const db = c.get("db");
  const account = await liveAccount(db, c.get("account").id);
  const canBuy = billingEnabled(c.env);
  const body = (
    <DashboardPage
      title="Plan & billing"
      section="/dashboard/billing"
      email={account.email}
      notice={error && <Notice kind="error">{error}</Notice>}
    >
      <section aria-labelledby="subscription-title" class="dashboard-section">
        <h2 id="subscription-title">Your plan</h2>
        <dl class="facts">
          <div>
            <dt>Plan</dt>
            <dd class="plan-name">{account.plan}</dd>
          </div>
          <div>
            <dt>Subscription</dt>
            <dd>
              <SubscriptionState
                subscription={
                  account.subscriptionStatus
                    ? {
                        status: account.subscriptionStatus,
                        cancel_at_period_end: account.cancelAtPeriodEnd,
                      }
                    : null
                }
                periodEnd={account.periodEnd}
              />
            </dd>
          </div>
          <div>
            <dt>Period</dt>
            <dd>
              <When iso={account.periodStart} /> to <When iso={account.periodEnd} />
            </dd>
          </div>
        </dl>
        {canBuy && account.stripeCustomerId && (
          <form method="post" action="/dashboard/billing/portal">
            <button type="submit" class="button-secondary">
              Manage subscription and invoices
            </button>
          </form>
        )}
      </section>
      <section aria-labelledby="plans-title" class="dashboard-section">
        <h2 id="plans-title">Plans</h2>
        {!canBuy && (
          <Notice kind="info">
            Buying is switched off on this server (Stripe is not configured). The operator grants
            plans and credit packs with the admin command.
          </Notice>
        )}
        <PlanTable account={account} canBuy={canBuy} />
        <div class="pack">
          <p>
            <strong>Credit pack:</strong> {count(CREDIT_PACK.credits)} credits for $
            {CREDIT_PACK.price_usd}, on top of your plan's; pack credits never expire.
          </p>
          {canBuy && (
            <form method="post" action="/dashboard/checkout">
              <input type="hidden" name="purchase" value="pack" />
              <button type="submit">Buy {count(CREDIT_PACK.credits)} credits</button>
            </form>
          )}
        </div>
      </section>
      <section aria-labelledby="ledger-title" class="dashboard-section">
        <h2 id="ledger-title">Credit ledger</h2>
        <p class="muted">
          Plan credits: {count(account.planCredits)}. Pack credits: {count(account.packCredits)}.
          Held by running jobs: {count(account.reservedCredits)}.
        </p>
        <p>
          <a href="/dashboard/usage">
            The ledger, one row per job, with this period by day and a CSV download
          </a>
        </p>
      </section>
    </DashboardPage>
  );
  return renderPage(c, body, error ? 503 : 200);
}

export function showBillingPage(c: PageContext) {
  return billingPage(c);
}

/** Sends the browser to Stripe (Checkout or the portal), or back here saying why it can't. */
async function toStripe(c: Context<AppEnv>, stripeUrl: () => Promise<string>) {
  try {
    return c.redirect(await stripeUrl(), 303);
  } catch (err) {
    if (err instanceof ApiError && err.status >= 500) return billingPage(c, err.userMessage);
    throw err;
  }
}

export async function submitCheckout(c: PageContext) {
  const parsed = PurchaseFormSchema.safeParse(await formOf(c));
  if (!parsed.success) {
    throw new ApiError("InvalidRequest", firstProblem(parsed.error).message);
  }
  const account = await liveAccount(c.get("db"), c.get("account").id);
  const origin = new URL(c.req.url).origin;
  return toStripe(c, () => startCheckout(c.env, account, parsed.data.purchase, origin));
}

export async function submitPortal(c: PageContext) {
  const account = await liveAccount(c.get("db"), c.get("account").id);
  return toStripe(c, () => openCustomerPortal(c.env, account, new URL(c.req.url).origin));
}
