// The Usage page (issue 36, decision 0251): this period's credits and frames by day as charts
// with the table of the same numbers, the credit ledger folded to one row per job (its hold
// shown inside that row), and the ledger as a CSV download.

import {
  type FoldedLedgerRow,
  foldedLedgerPage,
  foldedLedgerSize,
  ledgerBound,
  usageByDay,
} from "../../storage/usage.ts";
import { liveAccount } from "./data.ts";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, Pager, pageNumber, renderPage, signed, When } from "./ui.tsx";
import { periodDays, UsageCharts } from "./usage-chart.tsx";

const LEDGER_PAGE_SIZE = 25;

/** What an entry of no job is. */
const ENTRY_LABELS: Record<string, string> = {
  grant: "Plan credits",
  renewal: "Renewal",
  pack: "Credit pack",
  plan: "Plan set",
  "plan-start": "Plan started",
  "plan-change": "Plan changed",
  "back-to-free": "Back to free",
  // Entries of a job written before jobs were folded, or by hand: named all the same.
  reserve: "Held for a job",
  charge: "Job charged",
  release: "Hold released",
};

/** Where a job's entries leave it. */
const JOB_LABELS: Record<string, string> = {
  charge: "Job charged",
  release: "Job ended, nothing charged",
  reserve: "Job running, credits held",
};

function HeldCell(props: { row: FoldedLedgerRow }) {
  const { row } = props;
  if (row.job_id === null) return <>{signed(row.reserved_delta)}</>;
  return (
    <>
      {count(row.held)}
      <span class="hint">{row.reserved_delta > 0 ? "still held" : "released"}</span>
    </>
  );
}

function FoldedLedgerTable(props: { rows: FoldedLedgerRow[] }) {
  if (props.rows.length === 0) return <p class="muted">No entries yet.</p>;
  return (
    <div class="table-scroll">
      <table class="stack-table folded-ledger">
        <caption class="sr-only">Credit ledger, one row per job, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Entry</th>
            <th scope="col" class="num">
              Held
            </th>
            <th scope="col" class="num">
              Plan
            </th>
            <th scope="col" class="num">
              Pack
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr data-job={row.job_id ?? undefined}>
              <td data-label="When">
                <When iso={row.last_at} />
              </td>
              <td class="ledger-entry">
                {row.job_id === null ? (
                  <>
                    {ENTRY_LABELS[row.kind] ?? row.kind}
                    {row.note && <span class="hint">{row.note}</span>}
                  </>
                ) : (
                  <>
                    {JOB_LABELS[row.kind] ?? row.kind}
                    <span class="hint">
                      <a href={`/dashboard/jobs/${row.job_id}`} class="mono-id">
                        job {row.job_id.slice(0, 8)}
                      </a>
                      {row.job_url && <span class="break"> · {row.job_url}</span>}
                    </span>
                  </>
                )}
              </td>
              <td class="num" data-label="Held">
                <HeldCell row={row} />
              </td>
              <td class="num" data-label="Plan">
                {signed(row.plan_delta)}
              </td>
              <td class="num" data-label="Pack">
                {signed(row.pack_delta)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export async function usagePage(c: PageContext) {
  const db = c.env.DB;
  const account = await liveAccount(c.get("db"), c.get("account").id);
  const periodStart = account.periodStart ?? account.createdAt;
  const now = new Date().toISOString();
  const periodEnd = account.periodEnd && account.periodEnd < now ? account.periodEnd : now;
  const page = pageNumber(c.req.query("page"));
  const bound = await ledgerBound(db, account.id);
  const [byDay, rows, total] = await Promise.all([
    usageByDay(db, account.id, periodStart),
    foldedLedgerPage(db, account.id, {
      bound,
      limit: LEDGER_PAGE_SIZE,
      offset: (page - 1) * LEDGER_PAGE_SIZE,
    }),
    foldedLedgerSize(db, account.id, bound),
  ]);
  const days = periodDays(periodStart, periodEnd, byDay);
  const body = (
    <DashboardPage title="Usage" section="/dashboard/usage" email={account.email}>
      <section aria-labelledby="days-title" class="dashboard-section">
        <h2 id="days-title">This period by day</h2>
        <p class="muted">
          Jobs created since <When iso={periodStart} />, by the day they were created (UTC). Credits
          are charged when a job completes; failed jobs cost nothing.
        </p>
        <UsageCharts days={days} />
      </section>
      <section aria-labelledby="ledger-title" class="dashboard-section">
        <h2 id="ledger-title">Credit ledger</h2>
        <p class="muted">
          Every change of your balance, newest first, one row per job: the credits it held while it
          ran, and what it was charged. Plan credits: {count(account.planCredits)}. Pack credits:{" "}
          {count(account.packCredits)}. Held by running jobs: {count(account.reservedCredits)}.
        </p>
        <p class="downloads">
          <a href="/dashboard/usage/ledger.csv" download>
            Download CSV, one row per job
          </a>
          <a href="/dashboard/usage/ledger.csv?rows=entries" download>
            Download CSV, every entry
          </a>
        </p>
        <FoldedLedgerTable rows={rows} />
        <Pager path="/dashboard/usage" page={page} pageSize={LEDGER_PAGE_SIZE} total={total} />
      </section>
    </DashboardPage>
  );
  return renderPage(c, body);
}
