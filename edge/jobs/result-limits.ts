// What only the job can say of the extractor's result: how many frames it may bring back. Its
// shape, bounds and file keys are checked by the one ExtractResultSchema (schema/messages.ts).
import { planFrames, plannedFrameCount } from "../../schema/frame-plan.ts";
import type { ExtractResult, JobOptions } from "../../schema/messages.ts";
import { DEMO, type Plan } from "../../schema/plans.ts";

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
  if (options.mode === "live") return Math.min(plannedFrameCount(options, null) ?? 1, limit);
  if (options.mode === "count" || options.mode === "best") {
    // A budget's count is the extractor's to pick, within the plan (decision 0311).
    return Math.min(options.count ?? (options.budget ? limit : 1), limit);
  }
  // scenes, keyframes and slides find their own moments: count is an upper bound when given.
  if (options.mode === "scenes" || options.mode === "keyframes" || options.mode === "slides") {
    return Math.min(options.count ?? limit, limit);
  }
  if (durationSeconds === null) return limit;
  return Math.min(planFrames(options, durationSeconds + 0.001).frames.length, limit);
}

/** Why this result cannot be this job's, or null when it can. */
export function resultMismatch(result: ExtractResult, mostFrames: number): string | null {
  if (result.frames.length > mostFrames) {
    return `${result.frames.length} frames, but the job plans at most ${mostFrames}`;
  }
  const beyond = result.frames.find((f) => f.index > mostFrames);
  if (beyond) return `frame index ${beyond.index} is beyond the job's ${mostFrames} frames`;
  return null;
}
