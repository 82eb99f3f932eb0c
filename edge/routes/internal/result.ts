// The extractor's result as the edge accepts it. Everything in it is checked before it can
// touch a job: its shape and bounds (every number finite: 1e400 parses as Infinity, and
// JSON writes Infinity as null), its file keys, and its frames against what the job asked
// for, so a faulty or compromised extractor cannot charge for frames the job never planned.
import { z } from "zod";
import { planFrames } from "../../../schema/frame-plan.ts";
import { EXTRACT_ERROR_NAMES, type JobOptions } from "../../../schema/messages.ts";
import { DEMO, PLANS, type Plan } from "../../../schema/plans.ts";
import { parseFileKey } from "../../files.ts";

/** The most frames any job can have: the largest plan's limit. */
const MOST_FRAMES = Math.max(...Object.values(PLANS).map((p) => p.limits.max_frames_per_job));
/** Far beyond any video, small enough to stay finite through every sum. */
const MOST_SECONDS = 1e9;
const seconds = z.number().min(0).max(MOST_SECONDS);
const pixels = z.number().int().min(0).max(65_535);

const JobErrorShape = z.object({
  name: z.enum(EXTRACT_ERROR_NAMES),
  message: z.string().max(10_000),
  userMessage: z.string().max(2_000),
});

export const ExtractResultSchema = z
  .object({
    job_id: z.uuid(),
    kind: z.enum(["job", "demo"]),
    attempt_id: z.string().regex(/^[0-9a-zA-Z-]{1,64}$/),
    status: z.enum(["completed", "failed"]),
    duration_seconds: seconds.nullable(),
    processed_seconds: seconds.nullable(),
    width: pixels.nullable(),
    height: pixels.nullable(),
    requested_resolution: pixels.nullable(),
    delivered_resolution: pixels.nullable(),
    resolution_note: z.string().max(2_000).nullable(),
    frames: z
      .array(
        z.object({
          index: z.number().int().min(1).max(MOST_FRAMES),
          timestamp: seconds,
          status: z.enum(["ok", "error"]),
          key: z.string().max(300).nullable(),
          pts: seconds.nullable(),
          error: z.string().max(2_000).nullable(),
        }),
      )
      .max(MOST_FRAMES),
    zip: z
      .object({
        key: z.string().max(300),
        bytes: z
          .number()
          .int()
          .min(0)
          .max(2 ** 40),
      })
      .nullable(),
    error: JobErrorShape.nullable(),
  })
  .refine((r) => new Set(r.frames.map((f) => f.index)).size === r.frames.length, {
    message: "frame indexes must not repeat",
  })
  .refine(
    (r) =>
      r.frames.every((f) =>
        f.status === "ok" ? f.key !== null || r.zip !== null : f.key === null,
      ),
    { message: "an ok frame has a file (its own, or the ZIP) and an error frame has none" },
  )
  .refine(
    (r) => {
      // A result may only point at files of its own attempt: a buggy or compromised extractor
      // must not be able to hand one job's signed URLs to another job's files.
      const prefix = `${r.kind}/${r.job_id}/${r.attempt_id}/`;
      const keys = [...r.frames.map((f) => f.key), r.zip?.key ?? null];
      return keys.every((k) => k === null || (k.startsWith(prefix) && parseFileKey(k) !== null));
    },
    { message: "every file key must lie under the result's own {kind}/{job_id}/{attempt_id}/" },
  );

export type CheckedResult = z.infer<typeof ExtractResultSchema>;

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
