// No paying twice (decision 0350): a job whose source and options equal those of the same
// account's earlier completed job, still well within its retention, is served that job's
// frames instead of extracting them again, and charged 0 credits.
//
// The source is only known once the extractor has opened it (one request through the address
// policy, as every job makes): it reports the source's identity (a platform id, or the final
// URL with its ETag or Last-Modified and size) before decoding anything, and this module
// records the job's keys, looks for the account's earlier job with the same keys, and settles
// the job with that job's stored result. The attempt then stops.
//
// A reused job's files stay where they are, under the earlier job's R2 prefix (jobs.files_from);
// the cron deletes a prefix only once no unexpired job holds it (`prefixesToDelete`), so the
// later job keeps its frames for its own retention even after the earlier one expires.
import {
  ExtractResultSchema,
  type JobOptions,
  type SourceIdentity,
  type SourceReport,
} from "../../schema/messages.ts";
import type { Plan } from "../../schema/plans.ts";
import { canonicalJson, shapingOptions } from "../../schema/reuse.ts";
import { sha256Hex } from "../crypto.ts";
import { logEvent } from "../log.ts";
import { planOf } from "../plan-of.ts";
import { type AttemptRefusal, attemptTokenFits } from "./attempts.ts";
import { type JobRef, leaseIsLive, readAttemptState } from "./lifecycle.ts";
import { storedJobOptions } from "./read.ts";
import { settle } from "./settlement.ts";
import { filesFromOf, filesHeld, recordReuseKeys, reusableJob } from "./store/reuse.ts";
import { settledAttempt, settlingRow } from "./store/settlement.ts";

/**
 * A job in the last hour of its retention is not reused: the cron (every 10 minutes) could
 * otherwise delete the files between the match and the repeat's settlement.
 */
export const REUSE_MARGIN_MS = 3600_000;

/**
 * The options key: a hash of the normalised options that shape the frames (all but webhook_url
 * and reuse), with the plan limits the extractor applies to them (the width frames fit, the
 * longest video and the most frames), so a plan change that would change the result also
 * changes the key.
 */
export function optionsKey(options: JobOptions, plan: Plan): Promise<string> {
  const shaping = shapingOptions(options);
  const limits = plan.limits;
  return sha256Hex(
    canonicalJson({
      options: {
        ...shaping,
        max_width: Math.min(options.max_width ?? limits.max_width, limits.max_width),
      },
      max_video_seconds: limits.max_video_minutes * 60,
      max_frames: limits.max_frames_per_job,
    }),
  );
}

/** The source key: a hash of the platform id, or of the final URL, validators and size. */
export function sourceKey(source: SourceIdentity): Promise<string> {
  return sha256Hex(
    "platform_id" in source
      ? canonicalJson({ platform_id: source.platform_id })
      : canonicalJson({
          final_url: source.final_url,
          etag: source.etag,
          last_modified: source.last_modified,
          size: source.size,
        }),
  );
}

const REPLACED: AttemptRefusal = {
  refused: "too-late",
  error: "this attempt is no longer the job's current one",
};

/**
 * The running attempt's report of its source (POST /internal/jobs/job/{id}/source). Records the
 * job's keys; then, unless the job asked `reuse: false`, settles it with the account's earlier
 * job of the same keys, charged 0. `reusedFrom` names that job, or is null: extract as usual.
 */
export async function reportAttemptSource(
  env: Env,
  authorization: string | undefined,
  job: JobRef,
  report: SourceReport,
): Promise<{ reusedFrom: string | null } | AttemptRefusal> {
  const attemptId = report.attempt_id;
  const claim = { kind: job.kind, jobId: job.id, attemptId };
  if (!(await attemptTokenFits(env, authorization, claim))) {
    return {
      refused: "not-this-attempt",
      error: "this token is not valid for this job and attempt",
    };
  }
  if (job.kind !== "job") return { reusedFrom: null };
  const state = await readAttemptState(env, job);
  if (state === null) return { refused: "no-such-job", error: "no such job" };
  if (state.attemptId !== attemptId || !leaseIsLive(state, Date.now())) return REPLACED;
  const row = await settlingRow(env.DB, job);
  if (!row?.account_id || !row.options) return { refused: "no-such-job", error: "no such job" };
  const options = storedJobOptions(job.id, row.options);
  const keys = {
    sourceKey: await sourceKey(report.source),
    optionsKey: await optionsKey(options, planOf(row.plan)),
  };
  await recordReuseKeys(env.DB, job.id, keys);
  if (options.reuse === false) return { reusedFrom: null };

  const earlier = await reusableJob(env.DB, {
    accountId: row.account_id,
    ...keys,
    jobId: job.id,
    liveUntil: new Date(Date.now() + REUSE_MARGIN_MS).toISOString(),
  });
  if (!earlier) return { reusedFrom: null };
  const stored = await env.FILES.get(
    `job/${earlier.files_job}/${earlier.files_attempt}/result.json`,
  );
  const parsed = stored ? ExtractResultSchema.safeParse(await stored.json()) : null;
  if (!parsed?.success || parsed.data.status !== "completed") {
    logEvent("warn", "job.reuse_result_missing", { job: job.id, earlier: earlier.id });
    return { reusedFrom: null };
  }
  // The earlier result, as this job's: its frames and files are the earlier job's, under that
  // job's prefix; this attempt's id makes the settlement this attempt's.
  await settle(
    env,
    { ...parsed.data, kind: "job", job_id: job.id, attempt_id: attemptId },
    { reusedFrom: earlier.id, filesFrom: earlier.files_job },
  );
  // Another attempt's result may have settled the job first: it keeps its own frames.
  if ((await settledAttempt(env.DB, job.id)) !== attemptId) return REPLACED;
  logEvent("info", "job.reused", { job: job.id, attempt: attemptId, reused_from: earlier.id });
  return { reusedFrom: earlier.id };
}

/**
 * Whether the files under a job's prefix are still served at `now`: its own job, or a job that
 * reused it, is completed and unexpired.
 */
export function filesStillServed(db: D1Database, kind: "job" | "demo", jobId: string, now: number) {
  if (kind !== "job") return null;
  return filesHeld(db, jobId, new Date(now).toISOString());
}

/**
 * The R2 prefixes the cron deletes as it expires this job (`due` = now): its own unless a job
 * that reused it is still unexpired, and the prefix it reused once nothing else holds it.
 */
export async function prefixesToDelete(
  db: D1Database,
  jobId: string,
  due: string,
): Promise<string[]> {
  const prefixes: string[] = [];
  if (!(await filesHeld(db, jobId, due))) prefixes.push(`job/${jobId}/`);
  const filesFrom = await filesFromOf(db, jobId);
  if (filesFrom !== null && !(await filesHeld(db, filesFrom, due))) {
    prefixes.push(`job/${filesFrom}/`);
  }
  return prefixes;
}
