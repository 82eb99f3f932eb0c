// What a job's end means to batches (registered with edge/jobs/settlement.ts onJobEnded by
// edge/index.ts, which breaks the cycle create → settlement → batches → create): the job's own
// batch may be done, and the account's waiting batches have room for their next items. Every
// step is idempotent, so a settlement delivered twice only repeats checks.
import { feedBatch } from "./feed.ts";
import { completeIfDone } from "./lifecycle.ts";
import { activeBatchesBefore, batchesWaiting, batchOfJob } from "./store.ts";

export async function batchJobEnded(env: Env, ended: { jobId: string; accountId: string }) {
  for (const batchId of await batchesWaiting(env.DB, ended.accountId)) {
    await feedBatch(env, batchId);
  }
  const own = await batchOfJob(env.DB, ended.jobId);
  if (own) await completeIfDone(env, own);
}

/** The cron's pass: active batches a lost hook may have left behind are fed and checked again. */
export async function reviewActiveBatches(env: Env, now = Date.now()) {
  const before = new Date(now - 60_000).toISOString();
  for (const batchId of await activeBatchesBefore(env.DB, before, 100)) {
    await feedBatch(env, batchId);
  }
}
