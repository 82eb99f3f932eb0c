// The cron run: expires finished jobs past their retention (deleting their files), hands jobs
// whose attempt lost its lease, and jobs left queued with no message, back to the jobs queue,
// fails jobs that have been stuck far longer than any extraction can take, and renews plan
// credits.
import { drizzle } from "drizzle-orm/d1";
import { addMonth } from "../schema/accounts.ts";
import { COMPLETED, FAILED, PROCESSING, QUEUED } from "../schema/job-status.ts";
import { periodRenewalStatements } from "../schema/ledger.ts";
import { JOB_KINDS, type JobMessage } from "../schema/messages.ts";
import { reviewActiveBatches } from "./batches/ended.ts";
import { sendOwedCompletions } from "./batches/lifecycle.ts";
import { isUniqueViolation } from "./credits.ts";
import { expire } from "./jobs/lifecycle.ts";
import { prefixesToDelete } from "./jobs/reuse.ts";
import { deletePrefix, failUnsettled } from "./jobs/settlement.ts";
import { leaseRunOut, queuedSince } from "./jobs/store/attempts.ts";
import { clearExpiry, pastExpiry, unsettledSince } from "./jobs/store/expiry.ts";
import { errorFields, logEvent } from "./log.ts";
import { deleteExpiredSignIns } from "./storage/accounts.ts";
import { pruneApiRequests } from "./storage/api-requests.ts";
import { applyLedgerStatements, renewalsDue } from "./storage/ledger.ts";
import { pruneOldDeliveries } from "./storage/webhooks.ts";

const EXPIRE_BATCH = 200;
const STUCK_AFTER_MS = 3 * 3600_000;
/**
 * A job still queued this long after its creation has no message that will start it
 * (decision 0180): three times the longest first look (edge/jobs/start.ts, at most 10 s), and
 * under `npm start`'s second run after a restart (the lease + 2 s: 32 s by default), which so
 * finds every job that was queued when the stack stopped.
 */
export const QUEUED_STRANDED_AFTER_MS = 30_000;
/** Jobs handed back per table per run, oldest first; the next run takes the rest. */
const REQUEUE_BATCH = 100;
/** Two cron periods: an account that wrote since then is trimmed to its request-log bound. */
const REQUEST_LOG_TRIM_WINDOW_MS = 20 * 60_000;

/**
 * Files go first and the job is marked only once they are gone: a delete that fails leaves
 * the job as it was, so the next run selects it again (it already reads "expired" and serves
 * nothing meanwhile). One job's failure never stops the rest of the run.
 */
export async function expireJobs(env: Env, now: number): Promise<number> {
  let expired = 0;
  const due = new Date(now).toISOString();
  for (const kind of JOB_KINDS) {
    for (const id of await pastExpiry(env.DB, kind, COMPLETED, due, EXPIRE_BATCH)) {
      const done = await attempt(`expiring ${kind} ${id}`, async () => {
        // A repeat's files lie under the job it reused (decision 0350): a prefix goes only once
        // no unexpired job holds it, with the last one to expire.
        const prefixes =
          kind === "job" ? await prefixesToDelete(env.DB, id, due) : [`${kind}/${id}/`];
        for (const prefix of prefixes) await deletePrefix(env, prefix);
        await expire(env, { kind, id });
      });
      if (done) expired++;
    }
    // Failed jobs keep their status; what their attempts left is deleted, once.
    for (const id of await pastExpiry(env.DB, kind, FAILED, due, EXPIRE_BATCH)) {
      await attempt(`cleaning up failed ${kind} ${id}`, async () => {
        await deletePrefix(env, `${kind}/${id}/`);
        await clearExpiry(env.DB, { kind, id });
      });
    }
  }
  return expired;
}

/** Runs one step of the cron run; a failure is logged and left for the next run. */
async function attempt(what: string, step: () => Promise<unknown>): Promise<boolean> {
  try {
    await step();
    return true;
  } catch (err) {
    // The next run tries again.
    logEvent("error", "cron.step_failed", { step: what, ...errorFields(err) });
    return false;
  }
}

async function failStuckJobs(env: Env, now: number) {
  const before = new Date(now - STUCK_AFTER_MS).toISOString();
  for (const kind of JOB_KINDS) {
    for (const id of await unsettledSince(env.DB, kind, before, 100)) {
      await failUnsettled(env, { kind, id }, "ExtractionFailed", "the job did not finish in time");
    }
  }
}

/**
 * Attempts whose lease ran out (a dead or hung extractor) whatever became of their job's queue
 * message: each job gets a message now, and its delivery starts a new attempt
 * (edge/queues/jobs.ts). Returns how many jobs were handed back.
 */
export async function redispatchLostAttempts(env: Env, now: number): Promise<number> {
  let handed = 0;
  for (const kind of JOB_KINDS) {
    const lost = await leaseRunOut(env.DB, kind, PROCESSING, new Date(now).toISOString(), 100);
    for (const { id, attempt_id } of lost) {
      const message: JobMessage = { kind, id };
      await env.JOBS_QUEUE.send(message);
      logEvent("warn", "job.lease_lost", { job: id, attempt: attempt_id ?? undefined, kind });
      handed++;
    }
  }
  return handed;
}

/**
 * Jobs still queued QUEUED_STRANDED_AFTER_MS after their creation, unsettled: under `wrangler
 * dev` a restart drops the message that would start them (the creation's own dispatch died
 * with the process too), and nothing else looks at a queued job. Each gets a message now, as
 * redispatchLostAttempts does; the consumer starts one attempt at most (edge/jobs/lifecycle.ts
 * refuses a second start). Returns how many jobs were handed back.
 */
export async function redispatchQueuedJobs(env: Env, now: number): Promise<number> {
  let handed = 0;
  const before = new Date(now - QUEUED_STRANDED_AFTER_MS).toISOString();
  for (const kind of JOB_KINDS) {
    const stranded = await queuedSince(env.DB, kind, QUEUED, before, REQUEUE_BATCH);
    for (const { id, attempt_id } of stranded) {
      const message: JobMessage = { kind, id };
      await env.JOBS_QUEUE.send(message);
      logEvent("warn", "job.requeued", { job: id, attempt: attempt_id ?? undefined, kind });
      handed++;
    }
  }
  return handed;
}

/**
 * Plan credits reset to the monthly allowance when a period ends; pack credits stay. An
 * account with a live Stripe subscription is renewed by Stripe's invoice.paid event instead
 * (edge/billing), so the cron leaves it alone: renewing it here too would grant twice. A paid
 * plan is renewed here only while it was set by hand; one whose subscription stopped paying is
 * renewed on free (schema/ledger.ts, periodRenewalStatements).
 */
export async function renewPlanCredits(env: Env, now: number) {
  for (const account of await renewalsDue(env.DB, new Date(now).toISOString(), 500)) {
    const start = account.period_end;
    const statements = periodRenewalStatements({
      entryId: `renewal:${account.id}:${start}`,
      accountId: account.id,
      periodEnd: start,
      nextPeriodEnd: addMonth(new Date(start)).toISOString(),
    });
    try {
      // The delta is read in the same transaction that applies it; the entry id makes a
      // second run for the same period fail as a whole.
      await applyLedgerStatements(env.DB, statements);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
}

/** Sign-in codes and sessions past their expiry: nothing reads them any more. */
export async function purgeExpiredSignIns(env: Env, now: number) {
  await deleteExpiredSignIns(env.DB, new Date(now).toISOString());
}

export async function runScheduledMaintenance(env: Env, now: number) {
  await attempt("expiring jobs", () => expireJobs(env, now));
  await attempt("redispatching lost attempts", () => redispatchLostAttempts(env, now));
  await attempt("redispatching queued jobs", () => redispatchQueuedJobs(env, now));
  await attempt("failing stuck jobs", () => failStuckJobs(env, now));
  // A batch whose feed a lost job-end hook missed is fed and checked again (decision 0340).
  await attempt("feeding batches", () => reviewActiveBatches(env, now));
  await attempt("sending owed batch.completed events", () => sendOwedCompletions(env, now));
  await attempt("renewing plan credits", () => renewPlanCredits(env, now));
  await attempt("purging expired sign-ins", () => purgeExpiredSignIns(env, now));
  await attempt("pruning webhook deliveries", () => pruneOldDeliveries(env.DB, now));
  // Accounts that wrote since two runs ago are trimmed to their bound (decision 0250).
  await attempt("pruning the request log", () =>
    pruneApiRequests(drizzle(env.DB), now, now - REQUEST_LOG_TRIM_WINDOW_MS),
  );
}
