// What crosses the queues and the edge ⇄ extractor boundary, each shape defined once as a zod
// schema; the types are inferred from them. The edge builds requests and checks results with
// these, the extractor checks requests with them: neither side trusts what it did not check.
import { z } from "zod";
import {
  ANIMATED_FORMATS,
  ANIMATED_LIMITS,
  CAPTION_SOURCES,
  EXTRACTION_MODES,
  FrameSlideSchema,
  MAX_CAPTION_CHARS,
  MAX_COUNT,
  MAX_MEDIA_SECONDS,
  MAX_WIDTH,
  PROGRESS_STAGES,
  ScorePartsSchema,
  SKIP_REASONS,
  VideoSchema,
} from "./api.ts";
import { MAX_BUDGET_TOKENS } from "./budget.ts";
import { IMAGE_TOKEN_MODELS } from "./image-tokens.ts";
import { parseUploadKey } from "./job-files.ts";
import { CAPTURED_AT_SOURCES, LIVE_MAX_DURATION_SECONDS } from "./live.ts";
import { RESOLUTIONS } from "./plans.ts";
import { FrameTextSchema, MAX_TEXT_LANGUAGES, TEXT_LANGUAGE_TAGS } from "./text.ts";

export type { ExtractionMode } from "./api.ts";

export const JOB_KINDS = ["job", "demo"] as const;
export type JobKind = (typeof JOB_KINDS)[number];
export const IMAGE_FORMATS = ["jpg", "png", "webp"] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
export const OUTPUT_KINDS = ["urls", "zip", "both"] as const;
export type OutputKind = (typeof OUTPUT_KINDS)[number];

const seconds = z.number().min(0).max(MAX_MEDIA_SECONDS);

/** A moving preview's request with its defaults filled in (edge/jobs/options.ts). */
export const AnimatedOptionsSchema = z.object({
  /** Seconds from the source start; absent: around the best moment of the job's range. */
  start: seconds.optional(),
  duration: z.number().gt(0).max(ANIMATED_LIMITS.max_duration_seconds),
  fps: z.number().int().min(1).max(ANIMATED_LIMITS.max_fps),
  width: z.number().int().min(ANIMATED_LIMITS.min_width).max(ANIMATED_LIMITS.max_width),
  format: z.enum(ANIMATED_FORMATS),
});
export type AnimatedOptions = z.infer<typeof AnimatedOptionsSchema>;

/** Normalised job options, after defaults and mode inference (edge/jobs/options.ts). */
export const JobOptionsSchema = z
  .object({
    mode: z.enum(EXTRACTION_MODES),
    every: z.number().min(0.1).max(3600).optional(),
    /** live mode with every: seconds of the stream to watch (decision 0360). */
    duration: z.number().gt(0).max(LIVE_MAX_DURATION_SECONDS).optional(),
    count: z.number().int().min(1).max(MAX_COUNT).optional(),
    timestamps: z.array(seconds).min(1).max(500).optional(),
    start: seconds.optional(),
    end: z.number().gt(0).max(MAX_MEDIA_SECONDS).optional(),
    format: z.enum(IMAGE_FORMATS),
    resolution: z.literal(RESOLUTIONS),
    max_width: z.number().int().min(64).max(MAX_WIDTH).optional(),
    output: z.enum(OUTPUT_KINDS),
    webhook_url: z.string().max(8192).optional(),
    /** scenes mode: 0 only hard cuts … 1 every small change. */
    sensitivity: z.number().min(0).max(1).optional(),
    skip: z.array(z.enum(SKIP_REASONS)).max(3).optional(),
    storyboard: z.boolean().optional(),
    captions: z.boolean().optional(),
    captions_language: z.string().max(35).optional(),
    /** Read the text on screen of each delivered frame (extractor/text/ocr.ts). */
    text: z.boolean().optional(),
    /** With text: BCP 47 languages (schema/text.ts); absent means English. */
    text_languages: z.array(z.enum(TEXT_LANGUAGE_TAGS)).min(1).max(MAX_TEXT_LANGUAGES).optional(),
    animated: AnimatedOptionsSchema.optional(),
    /** A token budget: the extractor picks count and width once it has probed (decision 0311). */
    budget: z
      .object({
        tokens: z.number().int().min(1).max(MAX_BUDGET_TOKENS),
        model: z.enum(IMAGE_TOKEN_MODELS),
      })
      .optional(),
    /**
     * false: always extract, never serve an earlier job's frames (decision 0350). Absent means
     * the default, reuse allowed.
     */
    reuse: z.boolean().optional(),
  })
  .refine((o) => o.mode !== "count" || o.count !== undefined || o.budget !== undefined, {
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
export type JobOptions = z.infer<typeof JobOptionsSchema>;

/** The jobs-queue message: just enough to find the job again. */
export const JobMessageSchema = z.object({
  kind: z.enum(JOB_KINDS),
  id: z.string(),
  /**
   * Failed dispatches so far, when the consumer re-sends the job itself instead of retrying
   * the message (see edge/queues/jobs.ts). Absent means none.
   */
  failures: z.number().int().min(0).optional(),
});
export type JobMessage = z.infer<typeof JobMessageSchema>;

/** The results-queue message: where the extractor's result is stored in R2. */
export const ResultMessageSchema = z.object({
  kind: z.enum(JOB_KINDS),
  job_id: z.string(),
  result_key: z.string(),
});
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

/**
 * The webhook-queue message: one event to deliver. A job's event goes to the job's
 * webhook_url (`resend` when the dashboard asked for one more attempt); a test event names its
 * account and URL. Messages queued before resends and tests existed parse as job events.
 */
export const WebhookMessageSchema = z.union([
  z.object({
    event_id: z.string(),
    type: z.enum(["job.completed", "job.failed"]),
    job_id: z.string(),
    resend: z.boolean().optional(),
  }),
  z.object({
    event_id: z.string(),
    type: z.literal("webhook.test"),
    account_id: z.string(),
    url: z.string().max(8192),
  }),
]);
export type WebhookMessage = z.infer<typeof WebhookMessageSchema>;

/**
 * POST /extract's body. The bounds are the API's (schema/api.ts), so every time a job can
 * compute stays finite through JSON, whatever reaches the extractor.
 */
export const ExtractRequestSchema = z.object({
  job_id: z.string().min(1).max(100),
  kind: z.enum(JOB_KINDS),
  /**
   * Who holds the extractor slot: `account:<id>`, or `demo:<ip hash>` for demo jobs. The
   * extractor caps the slots one tenant holds at once; without a tenant the job is its own.
   */
  tenant: z.string().min(1).max(200).optional(),
  url: z.string().min(1).max(8192),
  platform: z.string().max(100),
  options: JobOptionsSchema,
  /** Longest video the plan allows, seconds; demo jobs clip to this instead of failing. */
  max_video_seconds: z.number().positive().max(MAX_MEDIA_SECONDS),
  /** When true, a video longer than max_video_seconds is processed only up to it (demo). */
  clip_to_max: z.boolean(),
  max_frames: z.number().int().positive().max(MAX_COUNT),
  /**
   * Where the extractor sends frames, lease renewals and its result, with the token that lets
   * it: valid for this job and attempt only (edge/routes/internal/attempt-token.ts).
   */
  callback: z.object({ base_url: z.url(), token: z.string().min(1).max(1000) }),
  /**
   * The attempt this dispatch is, chosen and recorded by the edge (edge/jobs/lifecycle.ts).
   * Absent from an older edge: the extractor then makes one up and renews no lease.
   */
  attempt_id: z
    .string()
    .regex(/^[0-9a-zA-Z-]{1,64}$/)
    .optional(),
  /**
   * The attempt counts as lost unless the extractor renews its lease within this many seconds
   * (POST /internal/jobs/{kind}/{job_id}/lease); it renews at a third of it.
   */
  lease_seconds: z.number().int().min(1).max(600).optional(),
});
export type ExtractRequest = z.infer<typeof ExtractRequestSchema>;

/** POST /internal/jobs/{kind}/{job_id}/lease: the running attempt says it is alive. */
export const LeaseRenewalSchema = z.object({
  attempt_id: z.string().regex(/^[0-9a-zA-Z-]{1,64}$/),
  /**
   * Sent once, as soon as the probe and the plan know it: the span of video the job covers.
   * The edge answers 409 when that span alone already costs more than the job's hold and the
   * account's free credits (edge/jobs/lifecycle.ts stopIfUnaffordable), so the attempt stops
   * before decoding instead of failing uncharged at its end.
   */
  processed_seconds: z.number().min(0).max(MAX_MEDIA_SECONDS).optional(),
});
export type LeaseRenewal = z.infer<typeof LeaseRenewalSchema>;
/** The name the extractor has always imported. */
export const extractRequestSchema = ExtractRequestSchema;

/** The errors a job can end with once its video has been fetched (DESIGN.md). */
export const EXTRACT_ERROR_NAMES = [
  // A direct link that answered something other than a video (decision 0260).
  "InvalidUrl",
  "NoVideoFound",
  "PrivateContent",
  "DownloadFailed",
  "VideoTooLong",
  "TooManyFrames",
  "ExtractionFailed",
] as const;
export type ExtractErrorName = (typeof EXTRACT_ERROR_NAMES)[number];

/** Far beyond any video, small enough to stay finite through every sum. */
const MOST_RESULT_SECONDS = 1e9;
const resultSeconds = z.number().min(0).max(MOST_RESULT_SECONDS);
const pixels = z.number().int().min(0).max(65_535);
const fileKey = z.string().max(300);
/** The most frames a result may carry: far above every plan's limit. */
export const MOST_RESULT_FRAMES = 100_000;

/**
 * POST /internal/jobs/job/{job_id}/progress: what the running attempt is doing, about every
 * second. Kept by the edge in the job's Durable Object (decision 0230), shown as job.progress.
 */
export const ProgressReportSchema = z.object({
  attempt_id: z.string().regex(/^[0-9a-zA-Z-]{1,64}$/),
  stage: z.enum(PROGRESS_STAGES),
  frames_done: z.number().int().min(0).max(MOST_RESULT_FRAMES),
  /** Null until the plan is known. */
  frames_total: z.number().int().min(0).max(MOST_RESULT_FRAMES).nullable(),
});
export type ProgressReport = z.infer<typeof ProgressReportSchema>;

/**
 * What identifies a job's source once the extractor has opened it (decision 0350): a platform's
 * own id for a platform link, or a file's final URL (after redirects) with its validators and
 * size. A file with neither ETag nor Last-Modified, or of unknown size, has no identity.
 */
export const SourceIdentitySchema = z.union([
  z.object({ platform_id: z.string().min(1).max(300) }).strict(),
  z
    .object({
      final_url: z.string().min(1).max(8192),
      etag: z.string().min(1).max(1000).nullable(),
      last_modified: z.string().min(1).max(100).nullable(),
      size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    })
    .strict()
    .refine((s) => s.etag !== null || s.last_modified !== null, {
      message: "a file needs an ETag or a Last-Modified to be known again",
    }),
]);
export type SourceIdentity = z.infer<typeof SourceIdentitySchema>;

/**
 * POST /internal/jobs/job/{job_id}/source: the running attempt has opened the source and tells
 * what it is, before decoding anything. The edge answers with SourceAnswer.
 */
export const SourceReportSchema = z.object({
  attempt_id: z.string().regex(/^[0-9a-zA-Z-]{1,64}$/),
  source: SourceIdentitySchema,
});
export type SourceReport = z.infer<typeof SourceReportSchema>;

/**
 * The edge's answer to a source report: `reused_from` names the account's earlier job whose
 * frames now settle this one (it is completed, charged 0), so the attempt stops without
 * decoding and posts no result; null means extract as usual.
 */
export const SourceAnswerSchema = z.object({ reused_from: z.string().max(100).nullable() });
export type SourceAnswer = z.infer<typeof SourceAnswerSchema>;

export const FrameResultSchema = z.object({
  index: z.number().int().min(1).max(MOST_RESULT_FRAMES),
  /** The requested moment, seconds from the start of the source. */
  timestamp: resultSeconds,
  status: z.enum(["ok", "error"]),
  /** R2 key the frame was stored under, when ok (null when it is only in the ZIP). */
  key: fileKey.nullable(),
  /** The delivered frame's own presentation time, seconds from the start of the source. */
  pts: resultSeconds.nullable(),
  error: z.string().max(2_000).nullable(),
  scene_score: z.number().min(0).max(1).nullable().optional(),
  /** With skip: the moment the delivered picture was taken from instead of `timestamp`. */
  moved_to: resultSeconds.nullable().optional(),
  moved_reason: z.enum(SKIP_REASONS).nullable().optional(),
  /** With captions: the cue text on screen at the delivered frame's time. */
  caption: z.string().max(MAX_CAPTION_CHARS).nullable().optional(),
  /** best mode: the frame's score, 0…1, and its parts (extractor/quality/best-score.ts). */
  score: z.number().min(0).max(1).nullable().optional(),
  score_parts: ScorePartsSchema.nullable().optional(),
  /** slides mode: when the frame's slide is on screen, and the frame it repeats (slides.ts). */
  slide: FrameSlideSchema.nullable().optional(),
  /** With text: what was read on the delivered frame; null when the frame failed. */
  text: FrameTextSchema.nullable().optional(),
  /** live mode: when the frame was on air (ISO 8601), and where that time comes from. */
  captured_at: z.iso.datetime().nullable().optional(),
  captured_at_source: z.enum(CAPTURED_AT_SOURCES).nullable().optional(),
  /**
   * The frame's thumbnail (at most 320 px wide, JPEG) for galleries, under the attempt's own
   * prefix like every key here (extractor/output/thumbnails.ts); absent from older extractors.
   */
  thumb_key: fileKey.nullable().optional(),
});
export type FrameResult = z.infer<typeof FrameResultSchema>;

export const ResultCaptionsSchema = z.object({
  key: fileKey,
  language: z.string().max(35).nullable(),
  source: z.enum(CAPTION_SOURCES),
});
export type ResultCaptions = z.infer<typeof ResultCaptionsSchema>;

export const ResultStoryboardSchema = z.object({
  image_key: fileKey,
  sprite_key: fileKey,
  vtt_key: fileKey,
  columns: z.number().int().min(1).max(100),
  rows: z.number().int().min(1).max(10_000),
  tile_width: pixels,
  tile_height: pixels,
});
export type ResultStoryboard = z.infer<typeof ResultStoryboardSchema>;

/** What a budget chose, measured on the delivered frames (schema/budget.ts), as job.budget. */
export const ResultBudgetSchema = z.object({
  tokens_estimated: z
    .number()
    .int()
    .min(0)
    .max(MOST_RESULT_FRAMES * 100_000),
  per_frame: z.number().int().min(0).max(100_000),
  frames: z.number().int().min(0).max(MOST_RESULT_FRAMES),
  width: pixels,
  height: pixels,
});
export type ResultBudget = z.infer<typeof ResultBudgetSchema>;

/** The moving preview made (extractor/animated/), stored as job.animated. */
export const ResultAnimatedSchema = z.object({
  key: fileKey,
  bytes: z.number().int().min(1).max(ANIMATED_LIMITS.max_bytes),
  frames: z
    .number()
    .int()
    .min(1)
    .max(ANIMATED_LIMITS.max_duration_seconds * ANIMATED_LIMITS.max_fps),
  width: pixels,
  height: pixels,
  format: z.enum(ANIMATED_FORMATS),
  start: resultSeconds,
  duration: z.number().gt(0).max(ANIMATED_LIMITS.max_duration_seconds),
  fps: z.number().int().min(1).max(ANIMATED_LIMITS.max_fps),
});
export type ResultAnimated = z.infer<typeof ResultAnimatedSchema>;

export type VideoFacts = z.infer<typeof VideoSchema>;

/**
 * What the extractor posts when a job ends, checked in full at the edge: every number finite
 * (1e400 parses as Infinity, and JSON writes Infinity as null), the job id one of the edge's
 * UUIDs, every file key under the result's own attempt and named as a job names its files.
 * What only the job knows (how many frames it planned) is checked against it
 * (edge/jobs/result-limits.ts).
 */
export const ExtractResultSchema = z
  .object({
    job_id: z.string().min(1).max(100),
    kind: z.enum(JOB_KINDS),
    /** Unique per attempt; the edge settles each job once whatever arrives twice. */
    attempt_id: z.string().regex(/^[0-9a-zA-Z-]{1,64}$/),
    status: z.enum(["completed", "failed"]),
    duration_seconds: resultSeconds.nullable(),
    /** Seconds of video the job processed (after range and clipping), for billing. */
    processed_seconds: resultSeconds.nullable(),
    width: pixels.nullable(),
    height: pixels.nullable(),
    requested_resolution: pixels.nullable(),
    delivered_resolution: pixels.nullable(),
    resolution_note: z.string().max(2_000).nullable(),
    frames: z.array(FrameResultSchema).max(MOST_RESULT_FRAMES),
    zip: z
      .object({
        key: fileKey,
        bytes: z
          .number()
          .int()
          .min(0)
          .max(2 ** 40),
      })
      .nullable(),
    error: z
      .object({
        name: z.enum(EXTRACT_ERROR_NAMES),
        message: z.string().max(10_000),
        userMessage: z.string().max(2_000),
      })
      .nullable(),
    /** What the extractor learned about the source (free; job.video). */
    video: VideoSchema.nullable().optional(),
    /** The captions file, when the job asked for captions and the video has some. */
    captions: ResultCaptionsSchema.nullable().optional(),
    /** Why a job that asked for captions has none (a sentence for the job's notice). */
    captions_note: z.string().max(500).nullable().optional(),
    storyboard: ResultStoryboardSchema.nullable().optional(),
    animated: ResultAnimatedSchema.nullable().optional(),
    budget: ResultBudgetSchema.nullable().optional(),
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
      return resultFileKeys(r).every((k) => k.startsWith(prefix));
    },
    { message: "every file key must lie under the result's own {kind}/{job_id}/{attempt_id}/" },
  )
  .refine((r) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(r.job_id), {
    message: "job_id must be a job's UUID",
    path: ["job_id"],
  })
  .refine((r) => resultFileKeys(r).every((k) => parseUploadKey(k) !== null), {
    message: "a file key is not {kind}/{job_id}/{attempt_id}/{name} with a name a job makes",
  });
export type ExtractResult = z.infer<typeof ExtractResultSchema>;

/** Every file key a result names: frames and their thumbnails, ZIP, captions, storyboard, preview. */
export function resultFileKeys(r: {
  frames: { key: string | null; thumb_key?: string | null }[];
  zip: { key: string } | null;
  captions?: { key: string } | null;
  storyboard?: { image_key: string; sprite_key: string; vtt_key: string } | null;
  animated?: { key: string } | null;
}): string[] {
  const keys = [
    ...r.frames.flatMap((f) => [f.key, f.thumb_key ?? null]),
    r.zip?.key ?? null,
    r.captions?.key ?? null,
    r.animated?.key ?? null,
  ];
  if (r.storyboard)
    keys.push(r.storyboard.image_key, r.storyboard.sprite_key, r.storyboard.vtt_key);
  return keys.filter((k): k is string => k !== null);
}
