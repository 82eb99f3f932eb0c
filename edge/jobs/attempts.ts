// What a running attempt may do, by the token the edge issued for it (edge/jobs/attempt-token.ts):
// write files under its {kind}/{job_id}/{attempt_id}/ while the job is unsettled, renew its
// lease and report its progress while it is the job's current attempt, and hand in its result,
// which is checked against the job and settled here (or, when settling fails, later by the
// results queue). The route (edge/routes/internal/) parses the HTTP and answers each refusal
// with its status.
import { z } from "zod";
import type { Progress } from "../../schema/api.ts";
import { PROCESSING, UNSETTLED_STATUSES } from "../../schema/job-status.ts";
import {
  type ExtractResult,
  ExtractResultSchema,
  JOB_KINDS,
  type LeaseRenewal,
  type ProgressReport,
  type ResultMessage,
} from "../../schema/messages.ts";
import { PLANS } from "../../schema/plans.ts";
import { edgeConfig } from "../config.ts";
import { jobWaiter } from "../durable/job-waiter.ts";
import { logEvent } from "../log.ts";
import { planOf } from "../plan-of.ts";
import { type AttemptClaim, verifyAttemptToken } from "./attempt-token.ts";
import { keepExtractorAwake } from "./dispatch.ts";
import { tenantOf } from "./extract-request.ts";
import {
  type JobRef,
  leaseIsLive,
  leaseSecondsFor,
  readAttemptState,
  renewLease,
} from "./lifecycle.ts";
import { storedJobOptions } from "./read.ts";
import { mostFramesFor, resultMismatch } from "./result-limits.ts";
import { failUnsettled, settle, stopIfUnaffordable } from "./settlement.ts";
import { jobStatus, resultJob } from "./store/jobs.ts";

/**
 * Why an attempt's call is refused: `invalid` (the call itself is wrong), `not-this-attempt`
 * (its token does not fit), `no-such-job`, or `too-late` (the job settled, another attempt
 * replaced this one, or the job was stopped). The route answers each with one status.
 */
export interface AttemptRefusal {
  refused: "invalid" | "not-this-attempt" | "no-such-job" | "too-late";
  error: string;
}

export function isRefusal(value: object): value is AttemptRefusal {
  return "refused" in value;
}

const NOT_THIS_ATTEMPT: AttemptRefusal = {
  refused: "not-this-attempt",
  error: "this token is not valid for this job and attempt",
};
const REPLACED: AttemptRefusal = {
  refused: "too-late",
  error: "this attempt is no longer the job's current one",
};

/** True when the bearer token was issued for exactly this job and attempt. */
export function attemptTokenFits(
  env: Env,
  authorization: string | undefined,
  claim: AttemptClaim,
): Promise<boolean> {
  const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1] ?? "";
  return verifyAttemptToken(edgeConfig(env).secrets.internalToken, token, claim, Date.now());
}

/**
 * Why this attempt may not write files now, or null when it may: only with its own attempt's
 * token, under a job that exists and has not settled.
 */
export async function mayWriteFiles(
  env: Env,
  authorization: string | undefined,
  claim: AttemptClaim,
): Promise<AttemptRefusal | null> {
  if (!(await attemptTokenFits(env, authorization, claim))) return NOT_THIS_ATTEMPT;
  const status = await jobStatus(env.DB, { kind: claim.kind, id: claim.jobId });
  if (status === null) return { refused: "no-such-job", error: "no such job" };
  if (!(UNSETTLED_STATUSES as readonly string[]).includes(status)) {
    return { refused: "too-late", error: `job is ${status}` };
  }
  return null;
}

/**
 * The attempt is alive for another lease. Refused when it is not the job's current attempt
 * (settled, or replaced after its lease ran out), or when the span it reports already costs
 * more than the account can pay (the job is then failed, uncharged).
 */
export async function renewAttemptLease(
  env: Env,
  authorization: string | undefined,
  job: JobRef,
  renewal: LeaseRenewal,
): Promise<{ leaseSeconds: number } | AttemptRefusal> {
  const attemptId = renewal.attempt_id;
  const claim = { kind: job.kind, jobId: job.id, attemptId };
  if (!(await attemptTokenFits(env, authorization, claim))) return NOT_THIS_ATTEMPT;
  const leaseSeconds = leaseSecondsFor(env);
  if (!(await renewLease(env, job, attemptId, leaseSeconds))) {
    // Settled, or another attempt took over after this one's lease ran out: stop working.
    logEvent("warn", "job.lease_refused", { job: job.id, attempt: attemptId, kind: job.kind });
    return REPLACED;
  }
  const processedSeconds = renewal.processed_seconds;
  if (processedSeconds !== undefined && (await stopIfUnaffordable(env, job, processedSeconds))) {
    logEvent("info", "job.stopped_unaffordable", {
      job: job.id,
      attempt: attemptId,
      processed_seconds: processedSeconds,
    });
    return {
      refused: "too-late",
      error: "the job costs more than the account's credits cover; stop",
    };
  }
  const tenant = await tenantOf(env, job);
  await keepExtractorAwake(env, { job_id: job.id, tenant }).catch((err) =>
    logEvent("warn", "extractor.keep_awake_failed", { job: job.id, error: String(err) }),
  );
  return { leaseSeconds };
}

/**
 * The attempt's progress, kept in the job's JobWaiter object, never in D1 (decision 0230): one
 * token check (no D1) and one object call per report. Refused when the job settled, when the
 * attempt is not the job's current one, or when it goes back. The object learns the current
 * attempt from the dispatch (begin); if it does not know this one (that call failed, or another
 * attempt is known), D1 decides once, and a replaced attempt is told to stop reporting.
 */
export async function reportAttemptProgress(
  env: Env,
  authorization: string | undefined,
  job: JobRef,
  report: ProgressReport,
): Promise<{ progress: Progress } | AttemptRefusal> {
  const attemptId = report.attempt_id;
  if (!(await attemptTokenFits(env, authorization, { kind: job.kind, jobId: job.id, attemptId }))) {
    return NOT_THIS_ATTEMPT;
  }
  const { attempt_id: _attempt, ...counts } = report;
  const progress = jobWaiter(env, job.kind, job.id);
  let taken = await progress.report(attemptId, counts);
  if ("refused" in taken && taken.refused === "unknown-attempt") {
    const state = await readAttemptState(env, job);
    const current =
      state !== null &&
      !state.settled &&
      state.status === PROCESSING &&
      state.attemptId === attemptId;
    if (!current) return REPLACED;
    if (await progress.begin(attemptId)) taken = await progress.report(attemptId, counts);
  }
  if ("progress" in taken) return taken;
  if (taken.refused === "goes-back") {
    return { refused: "invalid", error: "progress never goes back for the same attempt" };
  }
  return taken.refused === "settled"
    ? { refused: "too-late", error: "the job has ended" }
    : REPLACED;
}

/**
 * True when this attempt's result may settle the job only if it completed: it is not the job's
 * current attempt with a live lease. It was replaced, or its lease ran out (it hung) and the
 * backstop is about to start another or has started one the extractor turned away (busy, the
 * hung attempt still holding the tenant's slot): its failure is most likely the hang itself,
 * a source that timed out while it was stopped. A settled job's late results are left to
 * settlement (first come).
 */
async function isStale(env: Env, claim: AttemptClaim): Promise<boolean> {
  const state = await readAttemptState(env, { kind: claim.kind, id: claim.jobId });
  if (state === null || state.settled) return false;
  return !(state.attemptId === claim.attemptId && leaseIsLive(state, Date.now()));
}

/** Just enough of a posted result to know whose token it needs; the rest is checked after. */
const ResultClaim = z.object({
  kind: z.enum(JOB_KINDS),
  job_id: z.string().max(100),
  attempt_id: z.string().max(64),
});

/**
 * An attempt's result, as posted: checked against its token, its shape and its job, stored in
 * R2, then settled. `settled: false` when settling failed here and the results queue carries
 * it (by the stored result's key).
 */
export async function acceptResult(
  env: Env,
  authorization: string | undefined,
  body: unknown,
): Promise<{ settled: boolean } | AttemptRefusal> {
  const named = ResultClaim.safeParse(body);
  // No attempt named, so no token can fit it.
  if (!named.success) return NOT_THIS_ATTEMPT;
  const claim = {
    kind: named.data.kind,
    jobId: named.data.job_id,
    attemptId: named.data.attempt_id,
  };
  if (!(await attemptTokenFits(env, authorization, claim))) return NOT_THIS_ATTEMPT;
  // An attempt whose lease ran out may still finish: its completed result is real work and
  // settles the job, but its failure (often the hang itself, a source that timed out while it
  // was stopped) must not end a job another attempt runs or is about to run, and nor may a
  // faulty result of it.
  const stale = await isStale(env, claim);
  const parsed = ExtractResultSchema.safeParse(body);
  if (!parsed.success) {
    if (stale) return REPLACED;
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join(".") || "result"}: ${issue.message}` : "invalid";
    return refuseResult(env, claim, `not an extraction result: ${where}`);
  }
  const result = parsed.data;
  const job = await jobOf(env, result);
  if (!job) return { refused: "no-such-job", error: "no such job" };
  const mismatch = resultMismatch(
    result,
    mostFramesFor(job.options, job.plan, result.duration_seconds),
  );
  if (stale && (mismatch || result.status !== "completed")) return REPLACED;
  if (mismatch) return refuseResult(env, claim, mismatch);
  const key = `${result.kind}/${result.job_id}/${result.attempt_id}/result.json`;
  // Stored first: the results queue, the backstop below, carries only where it is (a result
  // with thousands of frames is larger than a queue message may be).
  await env.FILES.put(key, JSON.stringify(result), {
    httpMetadata: { contentType: "application/json" },
  });
  try {
    await settle(env, result);
    return { settled: true };
  } catch (err) {
    logEvent("warn", "job.settle_deferred", {
      job: result.job_id,
      attempt: result.attempt_id,
      error: String(err),
    });
    const message: ResultMessage = { kind: result.kind, job_id: result.job_id, result_key: key };
    await env.RESULTS_QUEUE.send(message);
    return { settled: false };
  }
}

async function jobOf(env: Env, result: ExtractResult) {
  const row = await resultJob(env.DB, { kind: result.kind, id: result.job_id });
  if (!row) return null;
  if (result.kind === "demo") return { options: null, plan: PLANS.free };
  return {
    options: storedJobOptions(result.job_id, row.options),
    plan: planOf(row.plan),
  };
}

/**
 * A result the edge cannot accept is final: the job it names (its token proved which) ends
 * failed now, uncharged, so the queue does not run the whole extraction again only to be
 * refused again.
 */
async function refuseResult(
  env: Env,
  claim: AttemptClaim,
  reason: string,
): Promise<AttemptRefusal> {
  if (/^[0-9a-f-]{36}$/.test(claim.jobId)) {
    logEvent("error", "job.result_refused", {
      job: claim.jobId,
      attempt: claim.attemptId,
      reason,
    });
    await failUnsettled(
      env,
      { kind: claim.kind, id: claim.jobId },
      "ExtractionFailed",
      `the extractor's result was refused: ${reason}`,
    );
  }
  return { refused: "invalid", error: reason };
}
