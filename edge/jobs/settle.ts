// A job's final state in one D1 batch (one transaction): the settlements guard row, its
// frames, its credits, the job row's final fields, and last its status, by the settle
// transition of edge/jobs/lifecycle.ts. Either all of it is written or none of it; the job row
// changes only while it is unsettled.
import type { ExtractErrorName, ExtractResult, JobOptions } from "../../schema/messages.ts";
import type { Plan } from "../../schema/plans.ts";
import { isUniqueViolation } from "../credits.ts";
import { isUnaffordable, settlementStatements } from "../storage/ledger.ts";
import { settledStatus } from "./lifecycle.ts";
import { jobNotice, resolutionNote } from "./notice.ts";
import { insertFrames } from "./store/frames.ts";
import { type FinalFields, finalDemoJob, finalJob, settlementRow } from "./store/settlement.ts";

const DEMO_RETENTION_DAYS = 1;
const DAY_MS = 86_400_000;

export interface FinalError {
  name: ExtractErrorName | "InsufficientBalance";
  message: string;
  userMessage: string;
}

/** What a job ends with: the extractor's result, or one the edge writes (failures, refusals). */
export type Settlement = Omit<ExtractResult, "error"> & { error: FinalError | null };

export interface SettlingJob {
  table: "jobs" | "demo_jobs";
  accountId: string | null;
  options: JobOptions | null;
  plan: Plan;
}

export type SettleOutcome = "settled" | "already-settled" | "unaffordable";

/**
 * Writes the job's final state and charges `cost`. "already-settled" when another settlement
 * won (the guard's primary key refused this one), "unaffordable" when the hold and the free
 * credits could not cover the cost; in both cases nothing was written. `also`: statements
 * written with it, in the same batch (a repeat's reuse marks, decision 0350).
 */
export async function writeSettlement(
  env: Env,
  job: SettlingJob,
  result: Settlement,
  cost: number,
  also: D1PreparedStatement[] = [],
): Promise<SettleOutcome> {
  const statements = [
    settlementRow(env.DB, result.job_id, result.attempt_id),
    ...(job.accountId ? settlementStatements(env.DB, job.accountId, result.job_id, cost) : []),
    ...(result.status === "completed"
      ? [insertFrames(env.DB, result.job_id, JSON.stringify(result.frames))]
      : []),
    ...also,
    updateJob(env.DB, job, result),
    settledStatus(
      env.DB,
      { kind: job.table === "demo_jobs" ? "demo" : "job", id: result.job_id },
      result.status,
    ),
  ];
  try {
    await env.DB.batch(statements);
    return "settled";
  } catch (err) {
    if (isUniqueViolation(err)) return "already-settled";
    if (isUnaffordable(err)) return "unaffordable";
    throw err;
  }
}

function updateJob(db: D1Database, job: SettlingJob, result: Settlement) {
  const now = Date.now();
  const completed = result.status === "completed";
  const retentionDays =
    job.table === "demo_jobs" ? DEMO_RETENTION_DAYS : job.plan.limits.retention_days;
  // A failed job keeps no files for users, but whatever an attempt left (partial frames, the
  // result) is deleted when this passes, as for a completed job.
  const expiresAt = new Date(now + retentionDays * DAY_MS).toISOString();
  const common: FinalFields = {
    durationSeconds: result.duration_seconds,
    width: result.width,
    height: result.height,
    error: result.error ? JSON.stringify(result.error) : null,
    completedAt: new Date(now).toISOString(),
    expiresAt,
    countFrames: completed,
    animated: completed && result.animated ? JSON.stringify(result.animated) : null,
  };
  if (job.table === "demo_jobs") return finalDemoJob(db, result.job_id, common);
  const note = resolutionNote({
    requested: result.requested_resolution,
    delivered: result.delivered_resolution,
    width: result.width,
    height: result.height,
    // A token budget chose its own width (decision 0311).
    maxWidth:
      result.budget?.width ??
      Math.min(job.options?.max_width ?? job.plan.limits.max_width, job.plan.limits.max_width),
    byBudget: result.budget != null,
    extractorNote: result.resolution_note,
  });
  const notice = jobNotice({
    id: result.job_id,
    status: result.status,
    expiresAt,
    framesCount: completed ? result.frames.length : null,
    zipped: result.zip !== null,
    resolutionNote: note,
    errorMessage: result.error?.userMessage ?? null,
    captionsNote: result.captions_note ?? null,
  });
  return finalJob(db, result.job_id, {
    ...common,
    processedSeconds: result.processed_seconds,
    zipKey: result.zip?.key ?? null,
    zipBytes: result.zip?.bytes ?? null,
    requestedResolution: result.requested_resolution,
    deliveredResolution: result.delivered_resolution,
    resolutionNote: note,
    notice,
    video: result.video ? JSON.stringify(result.video) : null,
    captions: storedCaptions(result),
    storyboard: completed && result.storyboard ? JSON.stringify(result.storyboard) : null,
    budget: completed && result.budget ? JSON.stringify(result.budget) : null,
  });
}

/** jobs.captions: the file when there is one, else why a job that asked has none. */
function storedCaptions(result: Settlement): string | null {
  if (result.status === "completed" && result.captions) return JSON.stringify(result.captions);
  if (result.captions_note) return JSON.stringify({ note: result.captions_note });
  return null;
}
