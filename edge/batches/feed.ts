// Feeding a batch: its pending items become ordinary jobs, in order, through the same
// createJob as POST /v1/jobs (the same checks, credit hold, webhooks and Idempotency-Key), as
// long as the account has room under its plan's max_active_jobs. The rest wait; a job's end
// feeds again (edge/batches/ended.ts), and so does the cron. Each item's job is created under
// the key `batch:<batch>:<index>`, so two feeds at once, or a feed repeated after a crash,
// find the same job instead of making a second.
import { drizzle } from "drizzle-orm/d1";
import type { Requester } from "../context.ts";
import { ApiError } from "../errors.ts";
import { createJob } from "../jobs/create.ts";
import { logEvent } from "../log.ts";
import { planOf } from "../plan-of.ts";
import { accountById } from "../storage/accounts.ts";
import { type BatchOptions, itemJobRequest, readStoredOptions } from "./create-request.ts";
import { completeIfDone } from "./lifecycle.ts";
import { ACTIVE, batchById, pendingItems, setItemFailed, setItemJob } from "./store.ts";

/** The Idempotency-Key of an item's job. */
export function itemJobKey(batchId: string, index: number): string {
  return `batch:${batchId}:${index}`;
}

type Fed = "job" | "failed" | "no-room";

/** Creates the jobs of the batch's pending items while the account has room; then checks its end. */
export async function feedBatch(env: Env, batchId: string): Promise<void> {
  const batch = await batchById(env.DB, batchId);
  if (!batch || batch.state !== ACTIVE) return;
  const account = await accountById(env.DB, batch.account_id);
  if (!account) return;
  const requester: Requester = {
    env,
    db: drizzle(env.DB),
    account,
    requestId: batch.request_id ?? undefined,
  };
  const { options } = readStoredOptions(batch.options);
  const room = planOf(account).limits.max_active_jobs;
  feeding: for (;;) {
    const items = await pendingItems(env.DB, batchId, room);
    if (items.length === 0) break;
    for (const item of items) {
      if ((await feedItem(requester, batchId, options, item)) === "no-room") break feeding;
    }
  }
  await completeIfDone(env, batchId);
}

async function feedItem(
  c: Requester,
  batchId: string,
  options: BatchOptions,
  item: { idx: number; url: string },
  retried = false,
): Promise<Fed> {
  try {
    const { jobId } = await createJob(
      c,
      itemJobRequest(options, item.url),
      itemJobKey(batchId, item.idx),
    );
    await setItemJob(c.env.DB, batchId, item.idx, jobId);
    return "job";
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // The account runs as many jobs as its plan allows: the item waits for one to end.
    if (err.apiName === "RateLimited") return "no-room";
    // The job was recorded but could not be queued, and was ended failed: the same key finds it.
    if (err.apiName === "ServiceUnavailable") {
      return retried ? "no-room" : feedItem(c, batchId, options, item, true);
    }
    const error = { name: err.apiName, message: err.message, userMessage: err.userMessage };
    await setItemFailed(c.env.DB, batchId, item.idx, JSON.stringify(error));
    logEvent("info", "batch.item_failed", { batch: batchId, index: item.idx, error: err.apiName });
    return "failed";
  }
}
