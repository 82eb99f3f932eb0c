// The Requests page (issue 36, decision 0250): the account's API requests of the last seven
// days, newest first, page by page, searchable by request id, so a customer who quotes the
// X-Request-Id they were answered finds what happened to it.
import {
  API_REQUEST_DAYS,
  API_REQUESTS_KEPT,
  type ApiRequestEntry,
  REQUEST_ID_MAX,
} from "../../../schema/api-requests.ts";
import { jobsCreatedBy, listApiRequests } from "../../storage/api-requests.ts";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, Pager, pageNumber, renderPage, When } from "./ui.tsx";

const PAGE_SIZE = 50;

function StatusCell(props: { status: number }) {
  const kind =
    props.status >= 500
      ? "status-failed"
      : props.status >= 400
        ? "status-client"
        : "status-completed";
  return <span class={`status ${kind}`}>{props.status}</span>;
}

/** The job a request created, linked. */
function JobMade(props: { jobId: string | undefined }) {
  if (!props.jobId) return null;
  return (
    <span class="hint">
      created{" "}
      <a href={`/dashboard/jobs/${props.jobId}`} class="mono-id">
        job {props.jobId.slice(0, 8)}
      </a>
    </span>
  );
}

function RequestTable(props: { rows: ApiRequestEntry[]; jobs: Map<string, string> }) {
  return (
    <div class="table-scroll">
      <table class="stack-table requests-table">
        <caption class="sr-only">API requests, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Request</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Latency
            </th>
            <th scope="col">Request id</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr data-request-id={row.request_id}>
              <td data-label="When">
                <When iso={row.created_at} />
              </td>
              <td data-label="Request" class="request-route">
                <span class="method">{row.method}</span> <code>{row.route}</code>
                <JobMade jobId={props.jobs.get(row.request_id)} />
              </td>
              <td data-label="Status">
                <StatusCell status={row.status} />
                {row.error && <span class="hint error-name">{row.error}</span>}
              </td>
              <td data-label="Latency" class="num">
                {count(row.latency_ms)} ms
              </td>
              <td data-label="Request id" class="break">
                <code class="request-id">{row.request_id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The searched id: trimmed, at most as long as an id can be. */
function searchedId(raw: string | undefined): string {
  return (raw ?? "").trim().slice(0, REQUEST_ID_MAX);
}

export async function requestsPage(c: PageContext) {
  const account = c.get("account");
  const requestId = searchedId(c.req.query("request_id"));
  const page = pageNumber(c.req.query("page"));
  const now = Date.now();
  const db = c.get("db");
  const { rows, total } = await listApiRequests(db, account.id, {
    limit: PAGE_SIZE,
    offset: (page - 1) * PAGE_SIZE,
    requestId: requestId || undefined,
    now,
  });
  const made = await jobsCreatedBy(
    db,
    account.id,
    rows.filter((row) => row.route === "/v1/jobs" && row.status < 300).map((row) => row.request_id),
    now,
  );
  const body = (
    <DashboardPage title="Requests" section="/dashboard/requests" email={account.email}>
      <p class="muted">
        Requests made with your API keys to the API and to MCP in the last {API_REQUEST_DAYS} days
        (the newest {count(API_REQUESTS_KEPT)}), newest first. Each answer carries its id in the{" "}
        <code>X-Request-Id</code> header and in every error body.
      </p>
      <form method="get" action="/dashboard/requests" class="search-form">
        <label for="request-id">Request id</label>
        <div class="search-row">
          <input
            id="request-id"
            name="request_id"
            type="search"
            value={requestId}
            maxlength={REQUEST_ID_MAX}
            autocomplete="off"
            spellcheck={false}
            placeholder="The X-Request-Id, or its start"
          />
          <button type="submit">Search</button>
          {requestId && (
            <a href="/dashboard/requests" class="button-link">
              Show all
            </a>
          )}
        </div>
      </form>
      {rows.length === 0 ? (
        <div class="empty-state">
          {requestId ? (
            <p>
              <strong>No request with an id starting with “{requestId}”.</strong> Requests are kept
              for {API_REQUEST_DAYS} days; only requests made with this account's keys are shown.
            </p>
          ) : (
            <p>
              <strong>No API requests in the last {API_REQUEST_DAYS} days.</strong> Requests made
              with one of your keys show here a moment after they are answered.
            </p>
          )}
        </div>
      ) : (
        <>
          <p class="muted" aria-live="polite">
            {requestId
              ? `${count(total)} ${total === 1 ? "request matches" : "requests match"}.`
              : `${count(total)} ${total === 1 ? "request" : "requests"}.`}
          </p>
          <RequestTable rows={rows} jobs={made} />
          <Pager
            path="/dashboard/requests"
            query={requestId ? { request_id: requestId } : undefined}
            page={page}
            pageSize={PAGE_SIZE}
            total={total}
          />
        </>
      )}
    </DashboardPage>
  );
  return renderPage(c, body);
}
