// The create-job request → normalised JobOptions, and the plan limits that can be checked
// before the video is fetched.
import {
  ANIMATED_DEFAULTS,
  type AnimatedRequest,
  type CreateJobRequest,
  inferMode,
} from "../../schema/api.ts";
import { chargedPerFrame, creditsFor } from "../../schema/billing.ts";
import { plannedFrameCount } from "../../schema/frame-plan.ts";
import type { AnimatedOptions, JobOptions } from "../../schema/messages.ts";
import {
  ANIMATED_CREDITS,
  type Plan,
  type Resolution,
  STORYBOARD_FRAMES,
  TEXT_FRAMES_PER_CREDIT,
} from "../../schema/plans.ts";
import { ApiError } from "../errors.ts";

export const DEFAULT_RESOLUTION: Resolution = 1080;

/**
 * Defaults filled in. An omitted resolution is 1080 or the plan's maximum when that is lower,
 * so a free account's plain request works; only an explicit one above the plan is refused.
 */
export function normaliseOptions(body: CreateJobRequest, plan: Plan): JobOptions {
  const mode = body.mode ?? inferMode(body);
  return {
    mode,
    ...(mode === "interval" ? { every: body.every ?? 1 } : {}),
    // live: every and duration together, or neither (the latest frame); checked by the schema.
    ...(mode === "live" && body.every !== undefined && body.duration !== undefined
      ? { every: body.every, duration: body.duration }
      : {}),
    ...(body.count !== undefined ? { count: body.count } : {}),
    // best mode's count defaults to 1, stored so the job says how many it asked for.
    // With a budget the extractor picks the count once it has probed (decision 0311).
    ...(mode === "best" && body.count === undefined && body.budget === undefined
      ? { count: 1 }
      : {}),
    ...(body.timestamps !== undefined ? { timestamps: body.timestamps } : {}),
    ...(body.start !== undefined ? { start: body.start } : {}),
    ...(body.end !== undefined ? { end: body.end } : {}),
    format: body.format ?? "jpg",
    resolution: body.resolution
      ? (Number(body.resolution) as Resolution)
      : (Math.min(DEFAULT_RESOLUTION, plan.limits.max_resolution) as Resolution),
    ...(body.max_width !== undefined ? { max_width: body.max_width } : {}),
    output: body.output ?? "urls",
    ...(body.webhook_url !== undefined ? { webhook_url: body.webhook_url } : {}),
    ...(mode === "scenes" && body.sensitivity !== undefined
      ? { sensitivity: body.sensitivity }
      : {}),
    // Each reason once, in one order, so equal requests store equal options.
    ...(body.skip?.length
      ? { skip: SKIP_ORDER.filter((reason) => body.skip?.includes(reason)) }
      : {}),
    ...(body.storyboard ? { storyboard: true } : {}),
    ...(body.captions ? { captions: true } : {}),
    ...(body.captions && body.captions_language !== undefined
      ? { captions_language: body.captions_language }
      : {}),
    ...(body.animated ? { animated: normaliseAnimated(body.animated) } : {}),
    ...(body.text ? { text: true } : {}),
    // Each language once, in the order asked (the first is Tesseract's main one).
    ...(body.text && body.text_languages !== undefined
      ? { text_languages: [...new Set(body.text_languages)] }
      : {}),
    ...(body.budget ? { budget: { tokens: body.budget.tokens, model: body.budget.model } } : {}),
    // Only the opt-out is kept: reuse is the default (decision 0350).
    ...(body.reuse === false ? { reuse: false } : {}),
  };
}

/** A moving preview's request with its defaults filled in (the job and the demo alike). */
export function normaliseAnimated(asked: AnimatedRequest): AnimatedOptions {
  return {
    ...(asked.start !== undefined ? { start: asked.start } : {}),
    duration: asked.duration ?? ANIMATED_DEFAULTS.duration,
    fps: asked.fps ?? ANIMATED_DEFAULTS.fps,
    width: asked.width ?? ANIMATED_DEFAULTS.width,
    format: asked.format ?? ANIMATED_DEFAULTS.format,
  };
}

/** Credits a moving preview adds, for these options (charged when it was delivered). */
function animatedCredits(options: JobOptions): number {
  return options.animated ? ANIMATED_CREDITS : 0;
}

const SKIP_ORDER = ["black", "blurry", "duplicate"] as const;

/** Credits reading the text on `frames` frames adds (decision 0262): 1 per 10, started. */
export function textCredits(options: JobOptions, frames: number): number {
  return options.text ? Math.ceil(frames / TEXT_FRAMES_PER_CREDIT) : 0;
}

/** Frames a storyboard is charged as, for these options. */
function storyboardFrames(options: JobOptions): number {
  return options.storyboard ? STORYBOARD_FRAMES : 0;
}

/** Refuses what the plan cannot allow, as far as it is known before the video is fetched. */
export function checkPlanLimits(options: JobOptions, plan: Plan): void {
  const limits = plan.limits;
  if (options.resolution > limits.max_resolution) {
    throw new ApiError(
      "ResolutionNotAllowed",
      `resolution ${options.resolution} is above the ${plan.name} plan's maximum of ${limits.max_resolution}`,
      { userMessage: `Your plan allows frames up to ${limits.max_resolution}p. Upgrade for more.` },
    );
  }
  const frames = plannedFrameCount(options, null);
  if (frames !== null && frames > limits.max_frames_per_job) {
    throw new ApiError(
      "TooManyFrames",
      `this job asks for ${frames} frames; the ${plan.name} plan allows ${limits.max_frames_per_job} per job`,
      { userMessage: `Your plan allows up to ${limits.max_frames_per_job} frames per job.` },
    );
  }
  const span = rangeSpan(options);
  if (span !== null && span > limits.max_video_minutes * 60) {
    throw new ApiError(
      "VideoTooLong",
      `the range covers ${span} s; the ${plan.name} plan processes at most ${limits.max_video_minutes} minutes`,
      {
        userMessage: `Your plan processes up to ${limits.max_video_minutes} minutes of video per job.`,
      },
    );
  }
}

function rangeSpan(options: JobOptions): number | null {
  // A live job covers the stream seconds it watches: its duration (the latest frame: none).
  if (options.mode === "live") return options.duration ?? 0;
  if (options.mode === "timestamps" || options.end === undefined) return null;
  return options.end - (options.start ?? 0);
}

/**
 * What to hold at creation: what the job is sure to cost if it delivers its frames, from what
 * is known before the video is probed. Timestamps mode is exact; count mode knows its frames
 * but not the minutes (at least one); interval mode at least one minute. A job the account
 * can afford is therefore never refused at creation: the rest is settled atomically with the
 * result (edge/credits.ts), and a job that turns out to cost more than the account holds
 * ends failed, uncharged.
 */
export function creditHold(options: JobOptions): number {
  const frames = plannedFrameCount(options, null);
  // A completed job has delivered at least one frame, and with it its storyboard.
  const extra = storyboardFrames(options);
  // A completed job has delivered its preview too (a preview that cannot be made fails it).
  const preview = animatedCredits(options);
  if (options.mode === "timestamps") {
    return creditsFor("timestamps", 0, (frames ?? 0) + extra) + preview + textCredits(options, 1);
  }
  // scenes, keyframes and best: only the first frame is certain (and its text read).
  if (chargedPerFrame(options.mode)) {
    return creditsFor(options.mode, 0, 1 + extra) + preview + textCredits(options, 1);
  }
  // live: every started minute it watches, up front (decision 0360); settled on what it watched.
  const watched = options.mode === "live" ? (rangeSpan(options) ?? 0) : 0;
  return (
    creditsFor(options.mode, watched, (options.mode === "count" ? (frames ?? 1) : 1) + extra) +
    preview +
    textCredits(options, 1)
  );
}

/**
 * The least a job charged per minute (interval, count) costs if it completes, once the probe
 * has found the span it covers: its started minutes, whatever it delivers. 0 for the modes
 * charged per frame, whose hold already covers the first frame.
 */
export function leastCreditsOnceProbed(options: JobOptions, processedSeconds: number): number {
  if (chargedPerFrame(options.mode)) return 0;
  return creditsFor(options.mode, processedSeconds, 1);
}

/**
 * The most a job can cost on its plan: its range (or the plan's longest video when it has no
 * end) with its frames (or the plan's most frames). A result that would cost more is not one
 * the extractor could have produced for this job, so settlement never charges above it.
 */
export function mostCredits(options: JobOptions, plan: Plan): number {
  const frames = plannedFrameCount(options, null);
  const extra = storyboardFrames(options);
  const mostFrames = Math.min(
    frames ?? plan.limits.max_frames_per_job,
    plan.limits.max_frames_per_job,
  );
  const preview = animatedCredits(options);
  if (options.mode === "timestamps") {
    return (
      creditsFor("timestamps", 0, (frames ?? 0) + extra) +
      preview +
      textCredits(options, frames ?? 0)
    );
  }
  const text = textCredits(options, mostFrames);
  if (chargedPerFrame(options.mode))
    return creditsFor(options.mode, 0, mostFrames + extra) + preview + text;
  return (
    creditsFor(
      options.mode,
      Math.min(rangeSpan(options) ?? Number.POSITIVE_INFINITY, plan.limits.max_video_minutes * 60),
      mostFrames + extra,
    ) +
    preview +
    text
  );
}

/**
 * The credits a completed result costs (spec §1), never above the most the job's options can
 * cost on its plan, whatever the result claims. A failed result costs nothing.
 */
export function resultCredits(
  result: {
    status: string;
    processed_seconds: number | null;
    frames: { status: string; text?: unknown }[];
    storyboard?: unknown;
    animated?: unknown;
  },
  options: JobOptions,
  plan: Plan,
): number {
  if (result.status !== "completed") return 0;
  // The storyboard is charged when it was delivered, like one more frame.
  const okFrames =
    result.frames.filter((f) => f.status === "ok").length +
    (options.storyboard && result.storyboard ? STORYBOARD_FRAMES : 0);
  // The preview is charged when it was delivered, on top of the frames.
  const preview = options.animated && result.animated ? ANIMATED_CREDITS : 0;
  // Text is charged per delivered frame it was read on.
  const read = result.frames.filter((f) => f.status === "ok" && f.text != null).length;
  return Math.min(
    creditsFor(options.mode, result.processed_seconds ?? 0, okFrames) +
      preview +
      textCredits(options, read),
    mostCredits(options, plan),
  );
}
