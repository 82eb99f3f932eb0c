// What crosses the queues and the edge ⇄ extractor boundary. Plain TypeScript types: both
// sides are ours, and the extractor validates the request it receives with zod (extractor/).
import type { Resolution } from "./plans.ts";

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
