// What crosses the queues and the edge ⇄ extractor boundary. Plain TypeScript types: both
// sides are ours. The request to the extractor also has its zod schema here, which the
// extractor parses with (it trusts nothing it did not check).
import { z } from "zod";
import { MAX_COUNT, MAX_MEDIA_SECONDS, MAX_WIDTH } from "./api.ts";
import type { Resolution } from "./plans.ts";
import { RESOLUTIONS } from "./plans.ts";

export type ExtractionMode = "interval" | "count" | "timestamps";
export type ImageFormat = "jpg" | "png" | "webp";
export type OutputKind = "urls" | "zip" | "both";

/** Normalised job options, after defaults and mode inference. */
export interface JobOptions {
  mode: ExtractionMode;
  every?: number;
  count?: number;
  timestamps?: number[];
  start?: number;
  end?: number;
  format: ImageFormat;
  resolution: Resolution;
  max_width?: number;
  output: OutputKind;
  webhook_url?: string;
}

/** The jobs-queue message: just enough to find the job again. */
export interface JobMessage {
  kind: "job" | "demo";
  id: string;
  /**
   * Failed dispatches so far, when the consumer re-sends the job itself instead of retrying
   * the message (local stack: see edge/queues/jobs.ts). Absent means none.
   */
  failures?: number;
}

/** The results-queue message: where the extractor's result is stored in R2. */
export interface ResultMessage {
  kind: "job" | "demo";
  job_id: string;
  result_key: string;
}

/** The webhook-queue message: one event to deliver. */
export interface WebhookMessage {
  event_id: string;
  type: "job.completed" | "job.failed";
  job_id: string;
}

/** What the edge posts to the extractor's POST /extract. */
export interface ExtractRequest {
  job_id: string;
  kind: "job" | "demo";
  /**
   * Who holds the extractor slot: `account:<id>`, or `demo:<ip hash>` for demo jobs. The
   * extractor caps the slots one tenant holds at once; without a tenant the job is its own.
   */
  tenant?: string;
  url: string;
  platform: string;
  options: JobOptions;
  /** Longest video the plan allows, seconds; demo jobs clip to this instead of failing. */
  max_video_seconds: number;
  /** When true, a video longer than max_video_seconds is processed only up to it (demo). */
  clip_to_max: boolean;
  max_frames: number;
  /** Where the extractor sends frames and its result, with the shared secret. */
  callback: { base_url: string; token: string };
}

const seconds = z.number().min(0).max(MAX_MEDIA_SECONDS);

const jobOptionsSchema = z
  .object({
    mode: z.enum(["interval", "count", "timestamps"]),
    every: z.number().min(0.1).max(3600).optional(),
    count: z.number().int().min(1).max(MAX_COUNT).optional(),
    timestamps: z.array(seconds).min(1).max(500).optional(),
    start: seconds.optional(),
    end: z.number().gt(0).max(MAX_MEDIA_SECONDS).optional(),
    format: z.enum(["jpg", "png", "webp"]),
    resolution: z.literal(RESOLUTIONS),
    max_width: z.number().int().min(64).max(MAX_WIDTH).optional(),
    output: z.enum(["urls", "zip", "both"]),
    webhook_url: z.string().max(8192).optional(),
  })
  .refine((o) => o.mode !== "count" || o.count !== undefined, {
    message: "count mode needs count",
    path: ["count"],
  })
  .refine((o) => o.mode !== "timestamps" || o.timestamps !== undefined, {
    message: "timestamps mode needs timestamps",
    path: ["timestamps"],
  })
  .refine((o) => o.start === undefined || o.end === undefined || o.end > o.start, {
    message: "end must be after start",
    path: ["end"],
  });

/**
 * POST /extract's body. The bounds are the API's (schema/api.ts), so every time a job can
 * compute stays finite through JSON, whatever reaches the extractor.
 */
export const extractRequestSchema = z.object({
  job_id: z.string().min(1).max(100),
  kind: z.enum(["job", "demo"]),
  tenant: z.string().min(1).max(200).optional(),
  url: z.string().min(1).max(8192),
  platform: z.string().max(100),
  options: jobOptionsSchema,
  max_video_seconds: z.number().positive().max(MAX_MEDIA_SECONDS),
  clip_to_max: z.boolean(),
  max_frames: z.number().int().positive().max(MAX_COUNT),
  callback: z.object({ base_url: z.url(), token: z.string().min(1).max(1000) }),
}) satisfies z.ZodType<ExtractRequest>;

/** The errors a job can end with once its video has been fetched (DESIGN.md). */
export const EXTRACT_ERROR_NAMES = [
  "NoVideoFound",
  "PrivateContent",
  "DownloadFailed",
  "VideoTooLong",
  "TooManyFrames",
  "ExtractionFailed",
] as const;
export type ExtractErrorName = (typeof EXTRACT_ERROR_NAMES)[number];

export interface FrameResult {
  index: number;
  timestamp: number;
  status: "ok" | "error";
  /** R2 key the frame was stored under, when ok. */
  key: string | null;
  /** The frame's own presentation time, seconds from the start of the source. */
  pts: number | null;
  error: string | null;
}

export interface ExtractResult {
  job_id: string;
  kind: "job" | "demo";
  /** Unique per attempt; the edge settles each job once whatever arrives twice. */
  attempt_id: string;
  status: "completed" | "failed";
  duration_seconds: number | null;
  /** Seconds of video the job processed (after range and clipping), for billing. */
  processed_seconds: number | null;
  width: number | null;
  height: number | null;
  requested_resolution: number | null;
  delivered_resolution: number | null;
  resolution_note: string | null;
  frames: FrameResult[];
  zip: { key: string; bytes: number } | null;
  error: { name: ExtractErrorName; message: string; userMessage: string } | null;
}
