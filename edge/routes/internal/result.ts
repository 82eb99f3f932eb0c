// The extractor's result as the edge accepts it. Everything in it is checked before it can
// touch a job: its shape and bounds (every number finite: 1e400 parses as Infinity, and
// JSON writes Infinity as null), its file keys, and its frames against what the job asked
// for, so a faulty or compromised extractor cannot charge for frames the job never planned.
import { planFrames } from "../../../schema/frame-plan.ts";
import {
  type ExtractResult,
  type JobOptions,
  resultFileKeys,
  ExtractResultSchema as SharedResultSchema,
} from "../../../schema/messages.ts";
import { DEMO, type Plan } from "../../../schema/plans.ts";
import { parseUploadKey } from "../../files.ts";

/**
 * The boundary's one schema (schema/messages.ts), and what only the edge knows: job ids are
 * its UUIDs, and file keys name files a job makes, in the shape /files/* serves.
 */
export const ExtractResultSchema = SharedResultSchema.refine(
  (r) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(r.job_id),
  { message: "job_id must be a job's UUID", path: ["job_id"] },
).refine((r) => resultFileKeys(r).every((k) => parseUploadKey(k) !== null), {
  message: "a file key is not {kind}/{job_id}/{attempt_id}/{name} with a name a job makes",
});

export type CheckedResult = ExtractResult;

/**
 * The most frames this job can have come back with: exact for count and timestamps; for
 * interval mode, the plan of the duration the result reports (a little over, for rounding),
 * never above the plan's limit. A demo has its fixed six.
 */
export function mostFramesFor(
  options: JobOptions | null,
  plan: Plan,
  durationSeconds: number | null,
): number {
  if (!options) return DEMO.frames;
  const limit = plan.limits.max_frames_per_job;
  if (options.mode === "timestamps") return Math.min(options.timestamps?.length ?? 0, limit);
  if (options.mode === "count") return Math.min(options.count ?? 1, limit);
  // scenes and keyframes find their own moments: count is an upper bound when given.
  if (options.mode === "scenes" || options.mode === "keyframes") {
    return Math.min(options.count ?? limit, limit);
  }
  if (durationSeconds === null) return limit;
  return Math.min(planFrames(options, durationSeconds + 0.001).frames.length, limit);
}

/** Why this result cannot be this job's, or null when it can. */
export function resultMismatch(result: CheckedResult, mostFrames: number): string | null {
  if (result.frames.length > mostFrames) {
    return `${result.frames.length} frames, but the job plans at most ${mostFrames}`;
  }
  const beyond = result.frames.find((f) => f.index > mostFrames);
  if (beyond) return `frame index ${beyond.index} is beyond the job's ${mostFrames} frames`;
  return null;
}
