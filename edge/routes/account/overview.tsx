// The dashboard's first page: plan, credits (plan and pack apart), the period, the subscription,
// this period's usage and the latest jobs.
import { billingEnabled } from "../../billing/checkout.ts";
import { baseUrl } from "../../request.ts";
import { d1Of } from "../../storage/d1-sessions.ts";
import { usageBody } from "../../usage.ts";
import { jobsWithThumbnails } from "./data.ts";
import { JobTable, NoJobsYet } from "./job-list.tsx";
import { SubscriptionState } from "./plan-state.tsx";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, Notice, renderPage, When } from "./ui.tsx";

const LATEST_JOBS = 5;

const CHECKOUT_NOTICES = {
  success: (
    <Notice kind="success">
      Thank you. Your purchase is applied as soon as Stripe confirms the payment; reload in a moment
      to see it here.
    </Notice>
  ),
  cancelled: <Notice kind="info">Checkout was cancelled; nothing was charged.</Notice>,
} as const;

export async function overviewPage(c: PageContext) {
  // The figures /v1/usage answers with, from the same function, so the two never disagree.
  const [usage, latest] = await Promise.all([
    usageBody(d1Of(c), c.get("account").id),
    jobsWithThumbnails(c, c.get("account").id, LATEST_JOBS, 0),
  ]);
  const { credits, period } = usage;
  const account = c.get("account");
  const checkout = c.req.query("checkout");
  const notice =
    checkout === "success" || checkout === "cancelled" ? CHECKOUT_NOTICES[checkout] : undefined;
  const page = (
    <DashboardPage title="Overview" section="/dashboard" email={account.email} notice={notice}>
      <section aria-labelledby="credits-title" class="dashboard-section">
        <h2 id="credits-title">Credits</h2>
        <dl class="stat-grid">
          <div class="stat stat-main">
            <dt>Available now</dt>
            <dd>{count(credits.available)}</dd>
          </div>
          <div class="stat">
            <dt>Plan credits</dt>
            <dd>
              {count(credits.plan)}
              <span class="hint">of {count(credits.monthly_allowance)} a month</span>
            </dd>
          </div>
          <div class="stat">
            <dt>Pack credits</dt>
            <dd>
              {count(credits.pack)}
              <span class="hint">never expire</span>
            </dd>
          </div>
          <div class="stat">
            <dt>Held by running jobs</dt>
            <dd>{count(usage.this_period.credits_reserved)}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby="plan-title" class="dashboard-section">
        <h2 id="plan-title">Plan</h2>
        <dl class="facts">
          <div>
            <dt>Plan</dt>
            <dd class="plan-name">{usage.plan}</dd>
          </div>
          <div>
            <dt>Period ends</dt>
            <dd>
              <When iso={period.end} />
              <span class="hint">
                plan credits reset to {count(credits.monthly_allowance)} then
              </span>
            </dd>
          </div>
          <div>
            <dt>Subscription</dt>
            <dd>
              <SubscriptionState subscription={usage.subscription} periodEnd={period.end} />
            </dd>
          </div>
        </dl>
        <p>
          <a href="/dashboard/billing">
            {billingEnabled(c.env) ? "Change plan or buy credits" : "Plans and the ledger"}
          </a>
        </p>
      </section>
      <section aria-labelledby="usage-title" class="dashboard-section">
        <h2 id="usage-title">This period</h2>
        <dl class="stat-grid">
          <div class="stat">
            <dt>Jobs</dt>
            <dd>
              {count(usage.this_period.jobs_created)}
              <span class="hint">
                {count(usage.this_period.jobs_completed)} completed,{" "}
                {count(usage.this_period.jobs_failed)} failed
              </span>
            </dd>
          </div>
          <div class="stat">
            <dt>Frames delivered</dt>
            <dd>{count(usage.this_period.frames_delivered)}</dd>
          </div>
          <div class="stat">
            <dt>Credits spent</dt>
            <dd>{count(usage.this_period.credits_charged)}</dd>
          </div>
        </dl>
        <p>
          <a href="/dashboard/usage">Usage by day, and the credit ledger</a>
        </p>
      </section>
      <section aria-labelledby="jobs-title" class="dashboard-section">
        <h2 id="jobs-title">Latest jobs</h2>
        {latest.rows.length === 0 ? (
          <NoJobsYet origin={baseUrl(c)} />
        ) : (
          <>
            <JobTable jobs={latest.rows} caption="Latest jobs" />
            {latest.total > LATEST_JOBS && (
              <p>
                <a href="/dashboard/jobs">All {count(latest.total)} jobs</a>
              </p>
            )}
          </>
        )}
      </section>
    </DashboardPage>
  );
  return renderPage(c, page);
}
