// The account's batches (decision 0381): the list, newest first, with each batch's items
// counted by status and its charge; and one batch with its options and its items, each linked
// to its job or saying why it has none. Read through edge/batches/read.ts, as the API reads
// them, so the page and GET /v1/batches never disagree. While a batch shown is not completed,
// the dashboard's script fetches the page again and puts the new part in place when its
// `data-state` changed (decision 0383).

import { inferMode } from "../../../schema/api.ts";
import {
  type Batch,
  type BatchCounts,
  BatchIdParamSchema,
  type BatchSummary,
  MAX_BATCH_URLS,
} from "../../../schema/batches.ts";
import { listBatches, readBatch } from "../../batches/read.ts";
import { ApiError } from "../../errors.ts";
import { StatusBadge } from "./job-list.tsx";
import { optionsLabel } from "./job-options.ts";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, notFoundPage, Pager, pageNumber, renderPage, When } from "./ui.tsx";

const BATCHES_PAGE_SIZE = 25;
const SECTION = "/dashboard/batches";

/**
 * The options every item takes, labelled as a job's are. A batch keeps them as they were asked
 * (its items' jobs normalise them), so the mode a job would infer is filled in first.
 */
function itemOptionsLabel(options: Record<string, unknown>): string {
  return optionsLabel({ ...options, mode: options.mode ?? inferMode(options) });
}

/** "5 links", or the playlist's title (its link when it has none). */
function batchName(batch: BatchSummary): string {
  if (batch.playlist) return batch.playlist.title || batch.playlist.url;
  return batch.counts.total === 1 ? "1 link" : `${count(batch.counts.total)} links`;
}

/** "4 of 5 ended · 1 failed": what a person wants from the counts at a glance. */
function progressOf(counts: BatchCounts): string {
  const ended = counts.completed + counts.failed + counts.expired;
  const parts = [`${count(ended)} of ${count(counts.total)} ended`];
  if (counts.failed > 0) parts.push(`${count(counts.failed)} failed`);
  if (counts.expired > 0) parts.push(`${count(counts.expired)} expired`);
  return parts.join(" · ");
}

/** What a batch's row shows that can change while it runs: the script compares it. */
function summaryState(batch: BatchSummary): string {
  const counts = Object.values(batch.counts).join(",");
  return `${batch.id}:${batch.status}:${counts}:${batch.credits_charged}`;
}

/** The same for one batch's page: its summary and each item's status and job. */
function batchState(batch: Batch): string {
  const items = batch.items.data.map((item) => `${item.status}:${item.job_id ?? ""}`);
  return `${summaryState(batch)}|${items.join(" ")}`;
}

function BatchTable(props: { batches: BatchSummary[] }) {
  return (
    <div
      class="table-scroll"
      data-live-batches
      data-state={props.batches.map(summaryState).join(" ")}
    >
      <table class="stack-table batches-table">
        <caption class="sr-only">Batches, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Batch</th>
            <th scope="col">Status</th>
            <th scope="col">Items</th>
            <th scope="col" class="num">
              Credits
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {props.batches.map((batch) => (
            <tr data-batch-id={batch.id} data-status={batch.status}>
              <td data-label="Batch" class="break">
                <a href={`${SECTION}/${batch.id}`}>{batchName(batch)}</a>
                <span class="hint job-options">{itemOptionsLabel(batch.options)}</span>
              </td>
              <td data-label="Status">
                <StatusBadge status={batch.status} />
              </td>
              <td data-label="Items">{progressOf(batch.counts)}</td>
              <td data-label="Credits" class="num">
                {count(batch.credits_charged)}
              </td>
              <td data-label="Created">
                <When iso={batch.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NoBatchesYet() {
  return (
    <div class="empty-state">
      <p>No batches yet.</p>
      <p class="hint">
        A batch is many links, one job each, with the same options: post <code>urls</code> (as many
        links as your plan takes) or <code>url</code> (a playlist) to <code>POST /v1/batches</code>.
        See <a href="/docs/batches">the batches guide</a>.
      </p>
    </div>
  );
}

export async function batchesPage(c: PageContext) {
  const account = c.get("account");
  const page = pageNumber(c.req.query("page"));
  const list = await listBatches(c.env, account.id, {
    limit: BATCHES_PAGE_SIZE,
    skip: (page - 1) * BATCHES_PAGE_SIZE,
  });
  const body = (
    <DashboardPage title="Batches" section={SECTION} email={account.email}>
      <p class="muted">
        Each batch made with your API keys, newest first. Its items are jobs: each is charged as a
        job, and listed under Jobs too.
      </p>
      {list.total === 0 ? <NoBatchesYet /> : <BatchTable batches={list.data} />}
      <Pager path={SECTION} page={page} pageSize={BATCHES_PAGE_SIZE} total={list.total} />
    </DashboardPage>
  );
  return renderPage(c, body);
}

export async function batchPage(c: PageContext) {
  const account = c.get("account");
  const id = BatchIdParamSchema.safeParse({ id: c.req.param("id") });
  let batch: Awaited<ReturnType<typeof readBatch>> | undefined;
  try {
    // Every item at once: a batch holds at most MAX_BATCH_URLS of them.
    if (id.success) {
      batch = await readBatch(c.env, account.id, id.data.id, { limit: MAX_BATCH_URLS, skip: 0 });
    }
  } catch (err) {
    if (!(err instanceof ApiError && err.apiName === "NotFound")) throw err;
  }
  if (!batch) return notFoundPage(c, "batch", SECTION);
  const { counts } = batch;
  const body = (
    <DashboardPage title={`Batch: ${batchName(batch)}`} section={SECTION} email={account.email}>
      <p>
        <a href={SECTION}>← All batches</a>
      </p>
      <div data-live-batch={batch.id} data-status={batch.status} data-state={batchState(batch)}>
        <section aria-labelledby="batch-title" class="dashboard-section">
          <h2 id="batch-title">
            Summary <StatusBadge status={batch.status} />
          </h2>
          <dl class="facts facts-compact">
            <div>
              <dt>Items</dt>
              <dd>{progressOf(counts)}</dd>
            </div>
            <div>
              <dt>Waiting, queued, processing</dt>
              <dd>
                {count(counts.pending)}, {count(counts.queued)}, {count(counts.processing)}
              </dd>
            </div>
            <div>
              <dt>Credits</dt>
              <dd>{count(batch.credits_charged)}</dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>
                <When iso={batch.created_at} />
              </dd>
            </div>
            <div>
              <dt>Ended</dt>
              <dd>
                <When iso={batch.completed_at} empty="not yet" />
              </dd>
            </div>
            <div class="fact-wide">
              <dt>Each item asks for</dt>
              <dd class="break">{itemOptionsLabel(batch.options)}</dd>
            </div>
            {batch.playlist && (
              <div class="fact-wide">
                <dt>Playlist</dt>
                <dd class="break">
                  {batch.playlist.url}
                  {batch.playlist.note && <span class="hint"> {batch.playlist.note}</span>}
                </dd>
              </div>
            )}
            <div class="fact-wide">
              <dt>Id</dt>
              <dd class="break">
                <code>{batch.id}</code>
              </dd>
            </div>
          </dl>
        </section>
        <section aria-labelledby="items-title" class="dashboard-section">
          <h2 id="items-title">Items</h2>
          <div class="table-scroll">
            <table class="stack-table batch-items-table">
              <caption class="sr-only">The batch's items, in the order of its links</caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    #
                  </th>
                  <th scope="col">Link</th>
                  <th scope="col">Status</th>
                  <th scope="col">Job</th>
                </tr>
              </thead>
              <tbody>
                {batch.items.data.map((item) => (
                  <tr data-item={item.index} data-status={item.status}>
                    <td data-label="#" class="num">
                      {item.index}
                    </td>
                    <td data-label="Link" class="break">
                      {item.url}
                    </td>
                    <td data-label="Status">
                      <StatusBadge status={item.status} />
                      {item.error && (
                        <span class="hint item-error">
                          {item.error.userMessage || item.error.message || item.error.name}
                        </span>
                      )}
                    </td>
                    <td data-label="Job">
                      {item.job_id ? (
                        <a href={`/dashboard/jobs/${item.job_id}`} class="mono-id">
                          job {item.job_id.slice(0, 8)}
                        </a>
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      </div>
    </DashboardPage>
  );
  return renderPage(c, body);
}
