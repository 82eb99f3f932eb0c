// Zod schemas of every v1 resource, with their OpenAPI names. The edge validates with them and
// generates /v1/openapi.json from them, so the document can never drift from the code.
import { z } from "@hono/zod-openapi";
import { BUDGET_SECONDS_PER_FRAME, budgetFitsAFrame, MAX_BUDGET_TOKENS } from "./budget.ts";
import {
  IMAGE_TOKEN_MODELS,
  IMAGE_TOKEN_RULES,
  type ImageTokenModel,
  leastImageTokens,
} from "./image-tokens.ts";
import { CAPTURED_AT_SOURCES, LIVE_MAX_DURATION_SECONDS } from "./live.ts";
import { PLAN_NAMES, RESOLUTIONS, TEXT_FRAMES_PER_CREDIT } from "./plans.ts";
import { FrameTextSchema, MAX_TEXT_LANGUAGES, TEXT_LANGUAGE_TAGS } from "./text.ts";
import { MAX_URL_LENGTH } from "./url-safety.ts";

export { MAX_URL_LENGTH };

export const EXTRACTION_MODES = [
  "interval",
  "count",
  "timestamps",
  "scenes",
  "keyframes",
  "best",
  "slides",
  "live",
] as const;
export type ExtractionMode = (typeof EXTRACTION_MODES)[number];

export const JOB_STATUSES = ["queued", "processing", "completed", "failed", "expired"] as const;
export const LISTABLE_STATUSES = ["queued", "processing", "completed", "failed"] as const;
export const API_ERROR_NAMES = [
  "InvalidUrl",
  "InvalidRequest",
  "NoVideoFound",
  "PrivateContent",
  "DownloadFailed",
  "VideoTooLong",
  "TooManyFrames",
  "ResolutionNotAllowed",
  "InsufficientBalance",
  "InvalidApiKey",
  "AuthenticationRequired",
  "RateLimited",
  "DemoLimitReached",
  "JobNotFound",
  "ExtractionFailed",
  "ServiceUnavailable",
  // Additions to the spec's list (additive, so v1 clients keep working): an unknown route is
  // not a missing job, and a known route called with the wrong method says so.
  "NotFound",
  "MethodNotAllowed",
] as const;
export type ApiErrorName = (typeof API_ERROR_NAMES)[number];

/**
 * Bounds of what a request may carry. They keep every number finite through JSON (1.8e302
 * seconds would become Infinity, which JSON writes as null) and every string small enough to
 * store; the OpenAPI document shows them. A week of video is far beyond any plan's span.
 */
export const MAX_MEDIA_SECONDS = 7 * 86_400;
export const MAX_COUNT = 1_000_000;
export const MAX_WIDTH = 8192;

const dateTime = z.iso.datetime();
const nullableDateTime = dateTime.nullable();

export const JobErrorSchema = z
  .object({
    name: z.string().openapi({ example: "PrivateContent" }),
    message: z.string(),
    userMessage: z.string(),
  })
  .openapi("JobError");

/** Why a frame was moved off the requested moment (`skip`). */
export const SKIP_REASONS = ["black", "blurry", "duplicate"] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** What a best-mode frame's score is made of (extractor/quality/best-score.ts), each 0 to 1. */
export const BEST_SCORE_PARTS = [
  "sharpness",
  "exposure",
  "contrast",
  "colourfulness",
  "interest",
] as const;

const unitScore = z.number().min(0).max(1);

export const ScorePartsSchema = z
  .object({
    sharpness: unitScore,
    exposure: unitScore,
    contrast: unitScore,
    colourfulness: unitScore,
    interest: unitScore,
  })
  .openapi("ScoreParts", {
    description:
      "best mode: the parts of a frame's score, each 0 to 1. sharpness: variance of the Laplacian at 256 px; exposure: few clipped shadows and highlights, light near the middle; contrast: RMS contrast; colourfulness: Hasler and Süsstrunk's metric; interest: entropy of the luma histogram",
  });
export type ScoreParts = z.infer<typeof ScorePartsSchema>;

/** slides mode: when a frame's slide is on screen, and which earlier frame it repeats. */
export const FrameSlideSchema = z
  .object({
    start: z.number().min(0).max(MAX_MEDIA_SECONDS).openapi({
      description:
        "Seconds from the source start when the slide is first seen: the first look (4 a second) at which the picture is the slide",
      example: 20.44,
    }),
    end: z.number().min(0).max(MAX_MEDIA_SECONDS).openapi({
      description:
        "When it has gone: the first look after it that no longer shows it, or the end of the range for the last slide",
      example: 23.24,
    }),
    repeat_of: z.number().int().min(1).nullable().openapi({
      description:
        "The `index` of the frame of this slide's first showing in the result, when the slide is shown again; null for a first showing",
      example: 1,
    }),
  })
  .openapi("FrameSlide", {
    description:
      "slides mode: the slide this frame shows, as `[start, end)`; the gaps between slides are transitions",
  });
export type FrameSlide = z.infer<typeof FrameSlideSchema>;

/** Longest caption text carried on one frame; longer cues are cut (data, never markup). */
export const MAX_CAPTION_CHARS = 1000;

export const FrameSchema = z
  .object({
    index: z.number().int().min(1).openapi({ description: "1-based position in the result" }),
    timestamp: z
      .number()
      .openapi({ description: "Requested moment, seconds from the source start" }),
    status: z.enum(["ok", "error"]),
    url: z
      .url()
      .nullable()
      .openapi({ description: "Signed URL, valid until the job's expires_at" }),
    error: z.string().nullable(),
    pts: z.number().nullable().optional().openapi({
      description: "Presentation time of the decoded frame shown at `timestamp`, in seconds",
    }),
    scene_score: z.number().min(0).max(1).nullable().optional().openapi({
      description: "scenes mode: how strongly the picture changed at this cut, 0 to 1",
    }),
    moved_to: z.number().nullable().optional().openapi({
      description:
        "With `skip`: the moment the delivered frame was taken from, when the frame at `timestamp` was skipped",
    }),
    moved_reason: z.enum(SKIP_REASONS).nullable().optional().openapi({
      description:
        "With `skip`: why the frame at `timestamp` was skipped (moved_to is null when no good frame lay within the window)",
    }),
    caption: z.string().max(MAX_CAPTION_CHARS).nullable().optional().openapi({
      description: "With `captions`: the caption text on screen at the delivered frame's time",
    }),
    score: unitScore.nullable().optional().openapi({
      description:
        "best mode: how good the frame looks, 0 to 1, the weighted mean of score_parts (frames come best first)",
    }),
    score_parts: ScorePartsSchema.nullable().optional(),
    slide: FrameSlideSchema.nullable().optional(),
    text: FrameTextSchema.nullable().optional().openapi({
      description:
        "With `text`: the text on screen, read from the delivered frame at full size (null when the frame failed)",
    }),
    captured_at: z.iso.datetime().nullable().optional().openapi({
      description:
        "live mode: when the frame was on air, from the segment's EXT-X-PROGRAM-DATE-TIME plus the frame's offset in it, or the time Stills read the segment (see captured_at_source)",
    }),
    captured_at_source: z.enum(CAPTURED_AT_SOURCES).nullable().optional().openapi({
      description:
        "live mode: `program_date_time` when captured_at comes from the stream, `received` when the stream gives no date and it is the time the segment was read",
    }),
  })
  .openapi("Frame");

/** What the extractor learned about the source. Free, on every completed job. */
export const VideoSchema = z
  .object({
    duration_seconds: z.number().nullable(),
    width: z.number().int().nullable().openapi({ description: "As displayed (after rotation)" }),
    height: z.number().int().nullable().openapi({ description: "As displayed (after rotation)" }),
    frame_rate: z.number().nullable(),
    codec: z.string().max(100).nullable(),
    rotation: z.number().int(),
    has_audio: z.boolean(),
    title: z.string().max(2000).nullable().optional().openapi({ description: "Platform links" }),
    uploader: z.string().max(500).nullable().optional(),
    channel: z.string().max(500).nullable().optional(),
    upload_date: z.string().max(10).nullable().optional().openapi({ example: "2024-05-01" }),
    view_count: z.number().int().min(0).nullable().optional(),
    page_url: z.string().max(MAX_URL_LENGTH).nullable().optional(),
  })
  .openapi("Video");

export const CAPTION_SOURCES = ["uploader", "automatic", "embedded"] as const;

export const CaptionsSchema = z
  .object({
    url: z.url().nullable().openapi({ description: "WebVTT file, signed like the frames" }),
    language: z.string().max(35).nullable(),
    source: z.enum(CAPTION_SOURCES),
  })
  .openapi("Captions");

export const StoryboardSchema = z
  .object({
    image_url: z.url().nullable().openapi({ description: "Contact sheet: the frames in a grid" }),
    sprite_url: z.url().nullable().openapi({ description: "Thumbnail sprite the VTT points into" }),
    vtt_url: z.url().nullable().openapi({ description: "WebVTT thumbnail track (#xywh cues)" }),
    columns: z.number().int(),
    rows: z.number().int(),
    tile_width: z.number().int(),
    tile_height: z.number().int(),
  })
  .openapi("Storyboard");

/** A moving preview's bounds (issue 39): as long, as smooth and as wide as a preview needs. */
export const ANIMATED_FORMATS = ["webp", "gif"] as const;
export const ANIMATED_LIMITS = {
  max_duration_seconds: 10,
  max_fps: 15,
  min_width: 64,
  max_width: 640,
  /** No preview file is larger: a bigger encoding is made again smaller (docs/guides). */
  max_bytes: 16 * 1024 * 1024,
} as const;
export const ANIMATED_DEFAULTS = {
  duration: 3,
  fps: 10,
  width: 480,
  format: "webp",
} as const;

export const AnimatedSchema = z
  .object({
    url: z.url().nullable().openapi({ description: "Signed like the frames" }),
    bytes: z.number().int(),
    frames: z.number().int().openapi({ description: "Pictures in the animation (fps × duration)" }),
    width: z.number().int(),
    height: z.number().int(),
    format: z.enum(ANIMATED_FORMATS),
    start: z
      .number()
      .openapi({ description: "Seconds from the source start of the first picture" }),
    duration: z.number().openapi({ description: "Seconds the animation lasts" }),
    fps: z.number(),
  })
  .openapi("Animated", {
    description:
      "A looping animated WebP or GIF of the video from `start`, each picture the one on screen at its time",
  });

/**
 * What a processing job is doing now. `waiting`: accepted by an extractor, waiting for a free
 * slot; then the stages in this order (a stage may be skipped, never revisited).
 */
export const PROGRESS_STAGES = [
  "waiting",
  "fetching",
  "probing",
  "extracting",
  "encoding",
  "uploading",
  "finishing",
] as const;
export type ProgressStage = (typeof PROGRESS_STAGES)[number];

export const ProgressSchema = z
  .object({
    stage: z.enum(PROGRESS_STAGES).openapi({
      description:
        "waiting (for a free slot), then fetching, probing, extracting, encoding, uploading, finishing; a stage may be skipped, never revisited",
    }),
    frames_done: z.number().int().min(0).openapi({
      description:
        "Frames done so far (made, or past the video's end); never goes back, and ends equal to frames_count",
    }),
    frames_total: z.number().int().min(0).nullable().openapi({
      description:
        "Frames the job will have, as frames_count counts them, once known (null before the video is probed)",
    }),
    updated_at: dateTime.openapi({
      description: "When the extractor last reported: about every second while the job runs",
    }),
  })
  .openapi("Progress");
export type Progress = z.infer<typeof ProgressSchema>;

/** What a job's token budget chose (decision 0311), measured on the delivered frames. */
export const JobBudgetSchema = z
  .object({
    tokens: z.number().int().openapi({ description: "The budget asked for" }),
    model: z.enum(IMAGE_TOKEN_MODELS),
    tokens_estimated: z.number().int().nullable().openapi({
      description:
        "per_frame × frames: what the delivered frames cost the model family by its published rule; never above tokens. Null until the job completes",
    }),
    per_frame: z.number().int().nullable().openapi({
      description: "Tokens one delivered frame costs, by the family's rule on its actual size",
    }),
    frames: z.number().int().nullable().openapi({ description: "Frames delivered (status ok)" }),
    width: z.number().int().nullable().openapi({ description: "Width of the delivered frames" }),
    height: z.number().int().nullable().openapi({ description: "Height of the delivered frames" }),
  })
  .openapi("JobBudget", {
    description:
      "Additive. With `budget`: the frames and size chosen to fit the token budget, and the estimate",
  });
export type JobBudget = z.infer<typeof JobBudgetSchema>;

const JOB_STATUS = z.enum(JOB_STATUSES);

export const JobSchema = z
  .object({
    id: z.uuid(),
    object: z.literal("job"),
    status: JOB_STATUS,
    url: z.string().max(MAX_URL_LENGTH),
    platform: z.string(),
    options: z.record(z.string(), z.unknown()),
    duration_seconds: z.number().nullable(),
    frames_count: z.number().int().nullable(),
    frames_failed: z.number().int(),
    credits_charged: z.number().int().nullable(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    frames: z.array(FrameSchema),
    zip_url: z.url().nullable(),
    zip_bytes: z.number().int().nullable(),
    requested_resolution: z.number().int().nullable(),
    delivered_resolution: z.number().int().nullable(),
    resolution_note: z.string().nullable(),
    notice: z.string(),
    error: JobErrorSchema.nullable(),
    video: VideoSchema.nullable().optional(),
    captions: CaptionsSchema.nullable().optional(),
    storyboard: StoryboardSchema.nullable().optional(),
    animated: AnimatedSchema.nullable().optional().openapi({
      description: "Additive. The moving preview, when the job asked for `animated`",
    }),
    budget: JobBudgetSchema.nullable().optional(),
    reused_from: z.uuid().nullable().optional().openapi({
      description:
        "Additive. The id of your earlier job whose frames this job was served, charged 0 credits: its source (the final URL with the same ETag or Last-Modified and size, or the same platform video) and its options were the same, and that job was still within retention. Null when the job extracted its own frames",
    }),
    progress: ProgressSchema.nullable().optional().openapi({
      description:
        "Additive. While processing: what the job is doing, at most about a second old while it runs; its numbers never go back, even when a new attempt takes over. A completed job keeps its last (frames_done = frames_total = frames_count); null while queued and when failed",
    }),
    created_at: dateTime,
    started_at: nullableDateTime,
    completed_at: nullableDateTime,
    expires_at: nullableDateTime,
  })
  .openapi("Job");

export const DemoAllowanceSchema = z
  .object({
    limit: z.number().int().openapi({ description: "Previews one address may start per UTC day" }),
    remaining: z.number().int().openapi({ description: "Previews left today after this one" }),
    resets_at: dateTime.openapi({ description: "The next UTC midnight, when it is whole again" }),
  })
  .openapi("DemoAllowance", {
    description:
      "The caller's daily demo allowance. A preview that fails is given back, so only previews that complete count.",
  });
export type DemoAllowance = z.infer<typeof DemoAllowanceSchema>;

export const DemoJobSchema = z
  .object({
    id: z.uuid(),
    object: z.literal("demo_job"),
    status: JOB_STATUS,
    platform: z.string(),
    duration_seconds: z.number().nullable(),
    frames_count: z.number().int().nullable(),
    frames_failed: z.number().int(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    frames: z.array(FrameSchema),
    error: JobErrorSchema.nullable(),
    created_at: dateTime,
    completed_at: nullableDateTime,
    expires_at: nullableDateTime,
    /** Additive: only in the answer to POST /v1/demo (and the MCP create_demo tool). */
    allowance: DemoAllowanceSchema.optional(),
    animated: AnimatedSchema.nullable().optional().openapi({
      description: "Additive. The moving preview, when the demo asked for `animated`",
    }),
  })
  .openapi("DemoJob");

export const UsageSchema = z
  .object({
    object: z.literal("usage"),
    plan: z.enum(PLAN_NAMES),
    credits: z.object({
      available: z.number().int(),
      plan: z.number().int(),
      pack: z.number().int(),
      monthly_allowance: z.number().int(),
    }),
    period: z.object({ start: nullableDateTime, end: nullableDateTime }),
    subscription: z.object({ status: z.string(), cancel_at_period_end: z.boolean() }).nullable(),
    limits: z.object({
      max_video_minutes: z.number().int(),
      max_frames_per_job: z.number().int(),
      max_width: z.number().int(),
      retention_days: z.number().int(),
      max_active_jobs: z.number().int(),
      requests_per_minute: z.number().int(),
      max_batch_items: z
        .number()
        .int()
        .optional()
        .openapi({ description: "Additive. Links one batch may carry (/docs/batches)" }),
      max_active_batches: z
        .number()
        .int()
        .optional()
        .openapi({ description: "Additive. Batches not yet completed at once" }),
    }),
    this_period: z.record(z.string(), z.unknown()),
    recent_ledger: z.array(z.record(z.string(), z.unknown())),
  })
  .openapi("Usage");

export const ProblemSchema = z
  .object({
    param: z.string().nullable().openapi({
      description:
        "The request parameter concerned (`timestamps[2]` for a list's item), or null when the problem is not one parameter's",
      example: "every",
    }),
    message: z.string().openapi({ example: "every must be at least 0.1 (seconds); got 0.05" }),
  })
  .openapi("Problem");

export const ErrorBodySchema = z
  .object({
    name: z.string().openapi({ example: "BadRequest" }),
    message: z.string(),
    code: z.number().int().openapi({ example: 400 }),
    className: z.string().openapi({ example: "bad-request" }),
    data: z.object({
      name: z.enum(API_ERROR_NAMES),
      userMessage: z.string(),
      reason: z.enum(["malformed", "invalid"]).optional(),
      errors: z.array(ProblemSchema).min(1).openapi({
        description:
          "Every problem found, in the order found; the first is `message`. Additive to the spec",
      }),
      request_id: z.string().nullable().openapi({
        description: "The request's id, equal to the X-Request-Id response header. Additive",
        example: "9b2f7c1e-4f3a-4d0e-9a55-2c1d7e0b6a11",
      }),
      doc_url: z.url().openapi({
        description: "The guide to this error name. Additive",
        example: "https://api.stills.dev/docs/errors#InvalidRequest",
      }),
    }),
  })
  .openapi("Error");

export const JobListSchema = z
  .object({
    total: z.number().int(),
    limit: z.number().int(),
    skip: z.number().int(),
    data: z.array(JobSchema),
  })
  .openapi("JobList");

export const PricingSchema = z.record(z.string(), z.unknown()).openapi("Pricing");

const RESOLUTION_VALUES = RESOLUTIONS.map(String) as [string, ...string[]];
const RESOLUTION_CHOICES = `must be one of ${listOfChoices(RESOLUTIONS)} (a number or a string)`;
const RESOLUTION_NUMBER = z
  .number()
  .refine((value) => (RESOLUTIONS as readonly number[]).includes(value), {
    error: RESOLUTION_CHOICES,
  })
  .openapi({ type: "integer", enum: [...RESOLUTIONS] });

/** Accepts `true`/`false` as JSON booleans or as the strings a query string carries. */
const booleanish = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0"])])
  .transform((v) => v === true || v === "true" || v === "1");

/**
 * An integer field of a request body. Zod's own `.int()` ends the parse of the whole body at a
 * fraction, so the rules between fields would go unchecked and unreported; this check does not.
 */
function wholeNumber(min: number, max: number) {
  return z
    .number()
    .min(min)
    .max(max)
    .refine(Number.isInteger, { error: "must be a whole number" })
    .openapi({ type: "integer", minimum: min, maximum: max });
}

export const AnimatedRequestSchema = z
  .strictObject({
    start: z.number().min(0).max(MAX_MEDIA_SECONDS).optional().openapi({
      description:
        "Seconds from the source start; default the best moment (the highest-scoring shot of the job's range, as mode best scores it). A start at or past the end fails the job, uncharged",
    }),
    duration: z
      .number()
      .gt(0)
      .max(ANIMATED_LIMITS.max_duration_seconds)
      .optional()
      .openapi({ description: `Seconds; default ${ANIMATED_DEFAULTS.duration}` }),
    fps: wholeNumber(1, ANIMATED_LIMITS.max_fps)
      .optional()
      .openapi({ description: `Pictures per second; default ${ANIMATED_DEFAULTS.fps}` }),
    width: wholeNumber(ANIMATED_LIMITS.min_width, ANIMATED_LIMITS.max_width)
      .optional()
      .openapi({
        description: `Pixels; default ${ANIMATED_DEFAULTS.width}, never above the video's own width`,
      }),
    format: z
      .enum(ANIMATED_FORMATS)
      .optional()
      .openapi({ description: `Animated WebP or GIF; default ${ANIMATED_DEFAULTS.format}` }),
  })
  .openapi("AnimatedRequest", {
    description: `A moving preview: one decode of the range, looping, at most ${ANIMATED_LIMITS.max_bytes / 1024 / 1024} MiB. Adds job.animated`,
  });

export type AnimatedRequest = z.infer<typeof AnimatedRequestSchema>;

const FAMILY_RULES = IMAGE_TOKEN_MODELS.filter((model) => model !== "generic")
  .map((model) => `${model}: ${IMAGE_TOKEN_RULES[model].source}`)
  .join("; ");

export const BudgetRequestSchema = z
  .strictObject({
    tokens: wholeNumber(1, MAX_BUDGET_TOKENS).openapi({
      description:
        "Input tokens the frames may cost the model, in all; at least one frame's least cost (gpt 255, gemini and generic 258)",
      example: 4000,
    }),
    model: z
      .enum(IMAGE_TOKEN_MODELS, { error: `must be one of ${listOfChoices(IMAGE_TOKEN_MODELS)}` })
      .openapi({
        description: `The model family whose published image-token rule counts the frames (${FAMILY_RULES}); generic: the most of the three`,
      }),
  })
  .openapi("BudgetRequest", {
    description: `Instead of count and max_width: Stills picks how many frames and how wide fit the tokens once it knows the video's aspect, as many as fit at a legible size (512 px on the long side), at most one per ${BUDGET_SECONDS_PER_FRAME} s of the range, then as wide as that count allows. count mode (the default with a budget), scenes, keyframes, best and any mode that finds its own moments; not interval or timestamps. Adds job.budget`,
  });

export const CreateJobRequestSchema = z
  .strictObject({
    url: z
      .string()
      .max(MAX_URL_LENGTH)
      .openapi({ format: "uri", example: "https://www.youtube.com/watch?v=dQw4w9WgXcQ" }),
    mode: z.enum(EXTRACTION_MODES).optional().openapi({
      description:
        "Inferred from count or timestamps when omitted. `scenes`: one frame per shot change, the first shot always included, each with its `scene_score`; `keyframes`: the stream's own keyframes. Both take `count` as an upper bound (scenes keeps the strongest cuts, keyframes spreads evenly) and are charged like timestamps: 1 credit per 10 delivered frames. `best`: the `count` (default 1) best-looking frames of the video or of `start`–`end`, best first, each with its `score` and `score_parts`, never two from one shot and at least a gap apart (the span over twice the count, at most 2 s); count is an upper bound, and it is charged like scenes. `slides`: one frame each time the picture settles on new content (a still stretch of at least 1 s is a slide; cross-fades, animations and a moving pointer are not changes), in time order, each with `slide: {start, end, repeat_of}`; a slide shown again is a frame again, with `repeat_of`. count is an upper bound keeping the most distinct slides; with `text`, the text read joins the picture in deciding repeats. Charged like scenes. Guide: /docs/slides. `live`: a live HLS playlist (.m3u8 without EXT-X-ENDLIST): with no `every`, its latest frame now; with `every` and `duration` (at most 600 s), that frame and one every `every` seconds of stream time as the stream plays, each with `captured_at`. Charged per started minute watched, like interval. Guide: /docs/live",
    }),
    every: z.number().min(0.1).max(3600).optional().openapi({
      description: "Seconds; default 1 (interval mode). live mode: stream seconds between frames",
    }),
    duration: z
      .number()
      .gt(0)
      .max(LIVE_MAX_DURATION_SECONDS)
      .optional()
      .openapi({
        description: `live mode with every: seconds of the stream to watch, at most ${LIVE_MAX_DURATION_SECONDS}`,
      }),
    count: wholeNumber(1, MAX_COUNT).optional(),
    timestamps: z.array(z.number().min(0).max(MAX_MEDIA_SECONDS)).min(1).max(500).optional(),
    start: z.number().min(0).max(MAX_MEDIA_SECONDS).optional(),
    end: z.number().gt(0).max(MAX_MEDIA_SECONDS).optional(),
    format: z.enum(["jpg", "png", "webp"]).optional().openapi({ description: "Default jpg" }),
    // A job echoes its resolution as a number (options.resolution, requested_resolution), so
    // the number is accepted as well as the spec's string.
    resolution: z
      .union([z.enum(RESOLUTION_VALUES), RESOLUTION_NUMBER], { error: RESOLUTION_CHOICES })
      .optional()
      .openapi({ description: 'Short side; default 1080. `720` and `"720"` are the same' }),
    max_width: wholeNumber(64, MAX_WIDTH).optional(),
    output: z.enum(["urls", "zip", "both"]).optional().openapi({ description: "Default urls" }),
    webhook_url: z.string().max(MAX_URL_LENGTH).optional().openapi({ format: "uri" }),
    sensitivity: z.number().min(0).max(1).optional().openapi({
      description:
        "scenes mode: 0 finds only hard cuts, 1 every small change; default 0.5 (a cut is a scene score of at least 0.5 − 0.45 × sensitivity)",
    }),
    skip: z.array(z.enum(SKIP_REASONS)).min(1).max(3).optional().openapi({
      description:
        "Replace a black (or one-colour), blurred or repeated frame by the nearest good one within its window (candidates at 0, ±0.25, ±0.5, ±1, ±2 s, strictly within half the distance to the neighbouring frame; forward only in scenes mode). `timestamp` stays the asked moment; `moved_to` and `moved_reason` say where and why. Repeats are judged by a 64-bit dHash, at most 4 bits apart from the previous delivered frame. Free: a moved frame is still one frame",
    }),
    storyboard: z.boolean().optional().openapi({
      description:
        "Also make a contact sheet (tiles 320 px wide, up to 5 columns, each frame's time written on it) and a WebVTT thumbnail track (a sprite of the same grid and `.vtt` cues with `#xywh`, covering the whole video), as job.storyboard URLs and ZIP entries. Charged as one more delivered frame",
    }),
    captions: z.boolean().optional().openapi({
      description: "Return the video's captions (WebVTT) and the text on screen at each frame",
    }),
    captions_language: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/, {
        error: "must be a language tag such as en, pt-BR or zh-Hant",
      })
      .optional()
      .openapi({ description: "BCP 47 language of the captions; default the video's own" }),
    text: z
      .boolean()
      .optional()
      .openapi({
        description: `Read the text on screen in each delivered frame (OCR, Tesseract, on the frame at full size) into frames[].text: {content, confidence, language}. Any mode. 1 more credit per ${TEXT_FRAMES_PER_CREDIT} frames read; about 0.3 s of work per 1080p frame and language`,
      }),
    text_languages: z
      .array(
        z.enum(TEXT_LANGUAGE_TAGS, { error: `must be one of ${TEXT_LANGUAGE_TAGS.join(", ")}` }),
      )
      .min(1)
      .max(MAX_TEXT_LANGUAGES)
      .optional()
      .openapi({
        description: `With \`text\`: BCP 47 languages to read, at most ${MAX_TEXT_LANGUAGES}; default ["en"]`,
      }),
    animated: AnimatedRequestSchema.optional(),
    budget: BudgetRequestSchema.optional(),
    reuse: z.boolean().optional().openapi({
      description:
        "Default true: when your own earlier job had the same source (same final URL with the same ETag or Last-Modified and size, or the same platform video) and the same options (webhook_url aside), and is still within retention, this job is served its frames at new URLs, costs 0 credits and names it in `reused_from`. false always extracts (and charges) afresh",
    }),
    wait: booleanish.optional().openapi({ type: "boolean" }),
  })
  .superRefine(checkCombinations, {
    // Also when a field failed on its own, so one answer lists every problem of the body.
    when: (payload) => isPlainObject(payload.value),
  })
  .openapi("CreateJobRequest");

export type CreateJobRequest = z.infer<typeof CreateJobRequestSchema>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "240, 360 or 480" */
export function listOfChoices(values: readonly (string | number)[]): string {
  const words = values.map(String);
  return words.length < 2
    ? words.join("")
    : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

/**
 * The rules between fields. It runs on bodies whose fields may have failed their own checks
 * (see `when` above), so it reads only what is there and compares numbers only. A batch's
 * options (schema/batches.ts) are checked by the same rules.
 */
export function checkCombinations(body: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const flag = (message: string, path: string) =>
    ctx.addIssue({ code: "custom", message, path: [path] });
  if (body.count !== undefined && body.timestamps !== undefined) {
    flag("count and timestamps cannot be combined", "timestamps");
  }
  const mode = body.mode ?? inferMode(body);
  if (mode === "interval" && (body.count !== undefined || body.timestamps !== undefined)) {
    flag(
      "interval mode takes every, not count or timestamps",
      body.count !== undefined ? "count" : "timestamps",
    );
  }
  if (mode === "count") {
    if (body.count === undefined && body.budget === undefined) {
      flag("count mode needs count (or a budget)", "count");
    }
    if (body.every !== undefined) flag("every applies to interval mode only", "every");
  }
  if (mode === "timestamps") {
    if (body.timestamps === undefined) flag("timestamps mode needs timestamps", "timestamps");
    if (body.every !== undefined) flag("every applies to interval mode only", "every");
    if (body.start !== undefined || body.end !== undefined) {
      flag(
        "start and end apply to interval and count modes",
        body.start !== undefined ? "start" : "end",
      );
    }
  }
  if (mode === "scenes" || mode === "keyframes") {
    if (body.every !== undefined) flag("every applies to interval mode only", "every");
    if (body.timestamps !== undefined) {
      flag(`${mode} mode finds its own moments; it takes no timestamps`, "timestamps");
    }
  }
  if (mode === "best") {
    if (body.every !== undefined) flag("every applies to interval mode only", "every");
    if (body.timestamps !== undefined) {
      flag("best mode finds its own moments; it takes no timestamps", "timestamps");
    }
    if (body.skip !== undefined) {
      flag("best mode already keeps the best frames; it takes no skip", "skip");
    }
  }
  if (mode === "slides") {
    if (body.every !== undefined) flag("every applies to interval mode only", "every");
    if (body.timestamps !== undefined) {
      flag("slides mode finds its own moments; it takes no timestamps", "timestamps");
    }
    if (body.skip !== undefined) {
      flag("slides mode already leaves out repeated pictures; it takes no skip", "skip");
    }
  }
  if (mode === "live") checkLive(body, flag);
  else if (body.duration !== undefined) flag("duration applies to live mode only", "duration");
  if (body.sensitivity !== undefined && mode !== "scenes") {
    flag("sensitivity applies to scenes mode only", "sensitivity");
  }
  if (body.captions_language !== undefined && body.captions !== true) {
    flag("captions_language needs captions: true", "captions_language");
  }
  if (body.text_languages !== undefined && body.text !== true) {
    flag("text_languages needs text: true", "text_languages");
  }
  if (body.budget !== undefined) checkBudget(body, mode, ctx);
  if (typeof body.start === "number" && typeof body.end === "number" && body.end <= body.start) {
    flag("end must be greater than start", "end");
  }
}

/** live mode (decision 0360): the latest frame, or every/duration; nothing that needs a file. */
function checkLive(body: Record<string, unknown>, flag: (message: string, path: string) => void) {
  if ((body.every === undefined) !== (body.duration === undefined)) {
    flag(
      "live mode takes every and duration together (or neither, for the latest frame)",
      body.every === undefined ? "every" : "duration",
    );
  }
  for (const field of LIVE_REFUSES) {
    if (body[field] !== undefined) {
      flag(`live mode takes every and duration; ${field} does not apply to a live stream`, field);
    }
  }
}

/** Fields that need a whole video, not a stream that plays. */
const LIVE_REFUSES = [
  "count",
  "timestamps",
  "start",
  "end",
  "budget",
  "skip",
  "storyboard",
  "captions",
  "animated",
  "text",
] as const;

/** The modes where the count is Stills' to choose, and so a budget's (decision 0311). */
const FIXED_COUNT_MODES: readonly string[] = ["interval", "timestamps"];

/** A budget chooses the count and the width: it cannot sit beside either, nor in a fixed mode. */
function checkBudget(body: Record<string, unknown>, mode: unknown, ctx: z.RefinementCtx): void {
  const flag = (message: string, path: (string | number)[]) =>
    ctx.addIssue({ code: "custom", message, path });
  if (body.count !== undefined) {
    flag("budget and count cannot be combined: the budget chooses how many frames", ["count"]);
  }
  if (body.max_width !== undefined) {
    flag("budget and max_width cannot be combined: the budget chooses the width", ["max_width"]);
  }
  if (typeof mode === "string" && FIXED_COUNT_MODES.includes(mode)) {
    flag(
      `budget does not apply to ${mode} mode, whose ${mode === "interval" ? "every" : "timestamps"} fixes the frames; use count (the default with a budget), scenes, keyframes, best or slides`,
      ["budget"],
    );
  }
  const budget = body.budget;
  if (!isPlainObject(budget) || typeof budget.tokens !== "number") return;
  if (!(IMAGE_TOKEN_MODELS as readonly unknown[]).includes(budget.model)) return;
  const model = budget.model as ImageTokenModel;
  // A token count that failed its own check (not whole, below 1) is reported once, there.
  const whole = Number.isInteger(budget.tokens) && budget.tokens >= 1;
  if (whole && !budgetFitsAFrame({ tokens: budget.tokens, model })) {
    flag(
      `budget.tokens ${budget.tokens} is below one frame's least cost for ${model} (${leastImageTokens(model)} tokens)`,
      ["budget", "tokens"],
    );
  }
}

export function inferMode(body: { count?: unknown; timestamps?: unknown; budget?: unknown }) {
  if (body.timestamps !== undefined) return "timestamps" as const;
  if (body.count !== undefined || body.budget !== undefined) return "count" as const;
  return "interval" as const;
}

export const WaitQuerySchema = z.object({
  wait: booleanish
    .optional()
    .openapi({ type: "boolean", description: "Block up to 50 s for the result" }),
});

/** POST /v1/jobs's Idempotency-Key header (the MCP extract_frames tool's idempotency_key). */
export const IdempotencyHeadersSchema = z.object({
  "idempotency-key": z.string().min(1).max(255).optional().openapi({
    description: "Makes a retried create return the first job instead of creating another",
  }),
});

/**
 * A whole number from a query string. `z.coerce` would read an empty `?skip=` as 0 (and
 * document the parameter as nullable); only digits are a number here.
 */
export function queryInteger(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .optional()
    .transform((value) => value ?? fallback)
    .openapi({ type: "integer", minimum: min, maximum: max, default: fallback });
}

export const ListJobsQuerySchema = z.object({
  limit: queryInteger(1, 100, 20),
  skip: queryInteger(0, 1_000_000_000 - 1, 0),
  status: z.enum(LISTABLE_STATUSES).optional(),
});

export const JobIdParamSchema = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
});

export const DemoRequestSchema = z
  .strictObject({
    url: z.string().max(MAX_URL_LENGTH).openapi({ format: "uri" }),
    // Additive: a moving preview beside the six frames, free like the demo.
    animated: AnimatedRequestSchema.optional(),
  })
  .openapi("DemoRequest");
