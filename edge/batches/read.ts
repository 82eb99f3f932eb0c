// Reading batches (GET /v1/batches, GET /v1/batches/{id}, the batch.completed event): the
// batch's row, its items' counts by status and the credits their jobs were charged, and a page
// of its items with their job ids. Only the account's own batches are found.
import type {
  Batch,
  BatchCounts,
  BatchItem,
  BatchItemStatus,
  BatchStatus,
  BatchSummary,
} from "../../schema/batches.ts";
import { ApiError } from "../errors.ts";
import { readStoredOptions } from "./create-request.ts";
import {
  type BatchRecord,
  batchById,
  batchPage,
  COMPLETED,
  type ItemTally,
  itemPage,
  itemTallies,
} from "./store.ts";

export function batchNotFound(id: string) {
  return new ApiError("NotFound", `batch ${id} not found`, {
    userMessage: "We couldn't find that batch in your account.",
  });
}

function emptyCounts(): BatchCounts {
  return { total: 0, pending: 0, queued: 0, processing: 0, completed: 0, failed: 0, expired: 0 };
}

function summaryOf(row: BatchRecord, tallies: ItemTally[]): BatchSummary {
  const counts = emptyCounts();
  let credits = 0;
  let started = false;
  for (const tally of tallies) {
    if (tally.status in counts) counts[tally.status as BatchItemStatus] += tally.n;
    counts.total += tally.n;
    credits += tally.credits;
    if (tally.started) started = true;
  }
  const ended = counts.completed + counts.failed + counts.expired;
  let status: BatchStatus = "queued";
  if (row.state === COMPLETED) status = "completed";
  else if (started || ended > 0) status = "running";
  const { options, playlist } = readStoredOptions(row.options);
  return {
    id: row.id,
    object: "batch",
    status,
    options: options as Record<string, unknown>,
    counts,
    credits_charged: credits,
    playlist,
    created_at: row.created_at,
    completed_at: row.completed_at,
  };
}

function errorOf(text: string | null): BatchItem["error"] {
  if (!text) return null;
  const error = JSON.parse(text) as { name?: string; message?: string; userMessage?: string };
  return {
    name: String(error.name ?? "ExtractionFailed"),
    message: String(error.message ?? ""),
    userMessage: String(error.userMessage ?? ""),
  };
}

/** A batch with a page of its items; NotFound unless it is the account's. */
export async function readBatch(
  env: Env,
  accountId: string,
  id: string,
  page: { limit: number; skip: number },
): Promise<Batch> {
  const row = await batchById(env.DB, id, accountId);
  if (!row) throw batchNotFound(id);
  const now = new Date().toISOString();
  const [tallies, items] = await Promise.all([
    itemTallies(env.DB, [id], now),
    itemPage(env.DB, id, page.limit, page.skip, now),
  ]);
  const summary = summaryOf(row, tallies);
  return {
    ...summary,
    items: {
      total: summary.counts.total,
      limit: page.limit,
      skip: page.skip,
      data: items.map((item) => ({
        index: item.idx,
        url: item.url,
        status: item.status as BatchItemStatus,
        job_id: item.job_id,
        error: errorOf(item.item_error ?? item.job_error),
      })),
    },
  };
}

/** The batch as the batch.completed event carries it (no items: the event points to them). */
export async function batchSummary(env: Env, id: string) {
  const row = await batchById(env.DB, id);
  if (!row) return null;
  const tallies = await itemTallies(env.DB, [id], new Date().toISOString());
  return { accountId: row.account_id, webhookUrl: row.webhook_url, data: summaryOf(row, tallies) };
}

/** A page of the account's batches, newest first. */
export async function listBatches(
  env: Env,
  accountId: string,
  query: { limit: number; skip: number },
) {
  const { total, rows } = await batchPage(env.DB, accountId, query.limit, query.skip);
  const tallies = await itemTallies(
    env.DB,
    rows.map((r) => r.id),
    new Date().toISOString(),
  );
  return {
    total,
    limit: query.limit,
    skip: query.skip,
    data: rows.map((row) =>
      summaryOf(
        row,
        tallies.filter((t) => t.batch_id === row.id),
      ),
    ),
  };
}
