// Which moments of a video a job turns into frames. Pure: the edge imports it for limits and
// credits before anything is fetched, the extractor once the duration is known. No Node APIs.
//
// Rules (DESIGN.md): count mode at start + (i + ½)·span/N; interval mode at start + k·every for
// every value below end; timestamps as given (sorted, so frames come back in time order). The
// range is clamped to the video, so interval and count frames always fall inside it; only an
// explicit timestamp can lie past the end, and that frame gets status "error".
import type { JobOptions } from "./messages.ts";

export type FramePlanOptions = Pick<
  JobOptions,
  "mode" | "every" | "count" | "timestamps" | "start" | "end"
> &
  Partial<Pick<JobOptions, "duration">>;

export interface PlannedFrame {
  /** 1-based, in time order. */
  index: number;
  /** Seconds from the start of the source (its first frame), rounded to the microsecond. */
  timestamp: number;
  /** At or after the end of the video: no picture is on screen then. */
  pastEnd: boolean;
}

export interface FramePlan {
  frames: PlannedFrame[];
  /** The processed part of the video, clamped to it. */
  rangeStart: number;
  rangeEnd: number;
  /** Seconds of video the job covers, for billing (0 when the range misses the video). */
  processedSeconds: number;
}

export const DEFAULT_EVERY_SECONDS = 1;

// Microseconds: far below any frame duration, far above float noise such as 0.1 + 0.2.
const TIME_SCALE = 1e6;
// Guards "below end" against float noise: 0.9 / 0.3 is 3.0000000000000004, not 3.
const COUNT_EPSILON = 1e-9;

export function roundTime(seconds: number): number {
  return Math.round(seconds * TIME_SCALE) / TIME_SCALE;
}

function intervalTimesCount(start: number, end: number, every: number): number {
  if (!(end > start)) return 0;
  return Math.ceil((end - start) / every - COUNT_EPSILON);
}

/**
 * live mode (decision 0360): stream seconds after the first (latest) frame at which frames are
 * taken, `every` apart below `duration`; [0] alone without every (the latest frame).
 */
export function liveFrameOffsets(options: Pick<JobOptions, "every"> & { duration?: number }) {
  if (options.every === undefined || options.duration === undefined) return [0];
  const count = Math.max(1, intervalTimesCount(0, options.duration, options.every));
  return Array.from({ length: count }, (_, k) => roundTime(k * (options.every as number)));
}

/** The frames of a job on a video of the given duration (seconds). */
export function planFrames(options: FramePlanOptions, durationSeconds: number): FramePlan {
  const duration = Math.max(0, durationSeconds);
  const start = Math.max(0, options.start ?? 0);
  const rangeEnd = Math.min(options.end ?? duration, duration);
  const rangeStart = Math.min(start, rangeEnd);
  const processedSeconds = roundTime(Math.max(0, rangeEnd - start));
  const times = plannedTimes(options, start, rangeEnd);
  const frames = times.map((time, i) => {
    const timestamp = roundTime(time);
    return { index: i + 1, timestamp, pastEnd: timestamp >= duration };
  });
  return { frames, rangeStart, rangeEnd, processedSeconds };
}

function plannedTimes(options: FramePlanOptions, start: number, rangeEnd: number): number[] {
  if (options.mode === "timestamps") {
    return [...(options.timestamps ?? [])].sort((a, b) => a - b);
  }
  if (options.mode === "count") {
    const count = Math.max(1, Math.floor(options.count ?? 1));
    const span = rangeEnd - start;
    // A range that misses the video still yields its frames, all past the end, so the job
    // can say which frames it could not deliver instead of silently returning nothing.
    if (!(span > 0)) return Array.from({ length: count }, () => start);
    return Array.from({ length: count }, (_, i) => start + ((i + 0.5) * span) / count);
  }
  const every = options.every ?? DEFAULT_EVERY_SECONDS;
  const count = intervalTimesCount(start, rangeEnd, every);
  if (count === 0) return [start];
  return Array.from({ length: count }, (_, k) => start + k * every);
}

/**
 * How many frames a job will have, when that can be known: timestamps and count modes always,
 * interval mode once the duration or an explicit end is known (with only an end it is an upper
 * bound: the range may shrink to the video); scenes and keyframes modes only their count, an
 * upper bound; best mode its count (default 1), an upper bound. Null when it cannot be known yet.
 */
export function plannedFrameCount(
  options: FramePlanOptions,
  durationSeconds: number | null,
): number | null {
  if (options.mode === "timestamps") return options.timestamps?.length ?? 0;
  if (options.mode === "live") return liveFrameOffsets(options).length;
  // count and best without a count: a budget's, which the extractor picks (decision 0311).
  if (options.mode === "count" || options.mode === "best") {
    return options.count === undefined ? null : Math.max(1, Math.floor(options.count));
  }
  // scenes, keyframes and slides: the video decides; count, when given, is the upper bound.
  if (options.mode === "scenes" || options.mode === "keyframes" || options.mode === "slides") {
    return options.count === undefined ? null : Math.max(1, Math.floor(options.count));
  }
  if (durationSeconds !== null) return planFrames(options, durationSeconds).frames.length;
  if (options.end === undefined) return null;
  const start = Math.max(0, options.start ?? 0);
  return Math.max(
    1,
    intervalTimesCount(start, options.end, options.every ?? DEFAULT_EVERY_SECONDS),
  );
}
