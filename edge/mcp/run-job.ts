// A job started by a tool and waited for, as extract_frames, overview and zoom do: created by
// the same function as POST /v1/jobs (limits, credit holds, idempotency, webhooks), then read
// with wait=true's read while the client hears progress.

import type { Context } from "hono";
import type { z } from "zod";
import {
  API_ERROR_NAMES,
  type ApiErrorName,
  type CreateJobRequest,
  type JobSchema,
} from "../../schema/api.ts";
import type { AppEnv } from "../context.ts";
import { requesterOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { createJob } from "../jobs/create.ts";
import { progressLine, readJob, WAIT_LIMIT_MS } from "../jobs/read.ts";
import { accountReaderOf } from "../request.ts";
import { reportingProgress } from "./progress.ts";
import type { ToolExtra } from "./tool.ts";

export type Job = z.infer<typeof JobSchema>;

export async function runJob(
  c: Context<AppEnv>,
  body: CreateJobRequest,
  idempotencyKey: string | undefined,
  extra: ToolExtra,
  doing: string,
): Promise<Job> {
  const { jobId } = await createJob(requesterOf(c), body, idempotencyKey);
  return reportingProgress(
    extra,
    `${doing} (job ${jobId})`,
    WAIT_LIMIT_MS / 1000,
    () => readJob(accountReaderOf(c), jobId, true),
    () => progressLine(c.env, jobId),
  );
}

/** A failed job as the error it ended with, so agents branch on data.name as for any error. */
export function jobFailure(job: Job): ApiError {
  const name = job.error?.name ?? "ExtractionFailed";
  const known = (API_ERROR_NAMES as readonly string[]).includes(name);
  return new ApiError(
    known ? (name as ApiErrorName) : "ExtractionFailed",
    `Job ${job.id} failed: ${job.error?.message ?? "unknown error"}`,
    { userMessage: job.error?.userMessage ?? "The extraction failed. Nothing was charged." },
  );
}

/** A job that is not (or no longer) completed has nothing to show: say what to do instead. */
export function notCompleted(job: Job): ApiError {
  return new ApiError(
    "InvalidRequest",
    `The job is ${job.status}: its frames can be shown only while it is completed and not expired`,
    {
      userMessage:
        job.status === "queued" || job.status === "processing"
          ? `The job is still running. Wait for it with get_job {"job_id": "${job.id}", "wait": true}, then call again.`
          : `The job is ${job.status}, so it has no frames to show.`,
    },
  );
}
