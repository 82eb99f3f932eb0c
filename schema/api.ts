// Zod schemas of every v1 resource, with their OpenAPI names. The edge validates with them and
// generates /v1/openapi.json from them, so the document can never drift from the code.
import { z } from "@hono/zod-openapi";
import { PLAN_NAMES, RESOLUTIONS } from "./plans.ts";

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
] as const;
export type ApiErrorName = (typeof API_ERROR_NAMES)[number];

const dateTime = z.iso.datetime();
const nullableDateTime = dateTime.nullable();

export const JobErrorSchema = z
  .object({
    name: z.string().openapi({ example: "PrivateContent" }),
    message: z.string(),
    userMessage: z.string(),
  })
  .openapi("JobError");

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
  })
  .openapi("Frame");

const JOB_STATUS = z.enum(JOB_STATUSES);

export const JobSchema = z
  .object({
    id: z.uuid(),
    object: z.literal("job"),
    status: JOB_STATUS,
    url: z.string(),
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
    created_at: dateTime,
    started_at: nullableDateTime,
    completed_at: nullableDateTime,
    expires_at: nullableDateTime,
  })
  .openapi("Job");

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
    }),
    this_period: z.record(z.string(), z.unknown()),
    recent_ledger: z.array(z.record(z.string(), z.unknown())),
  })
  .openapi("Usage");

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

/** Accepts `true`/`false` as JSON booleans or as the strings a query string carries. */
const booleanish = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0"])])
  .transform((v) => v === true || v === "true" || v === "1");

export const CreateJobRequestSchema = z
  .strictObject({
    url: z
      .string()
      .openapi({ format: "uri", example: "https://www.youtube.com/watch?v=dQw4w9WgXcQ" }),
    mode: z.enum(["interval", "count", "timestamps"]).optional().openapi({
      description: "Inferred from count or timestamps when omitted",
    }),
    every: z.number().min(0.1).max(3600).optional().openapi({ description: "Seconds; default 1" }),
    count: z.number().int().min(1).optional(),
    timestamps: z.array(z.number().min(0)).min(1).max(500).optional(),
    start: z.number().min(0).optional(),
    end: z.number().gt(0).optional(),
    format: z.enum(["jpg", "png", "webp"]).optional().openapi({ description: "Default jpg" }),
    resolution: z
      .enum(RESOLUTION_VALUES)
      .optional()
      .openapi({ description: "Short side; default 1080" }),
    max_width: z.number().int().min(64).optional(),
    output: z.enum(["urls", "zip", "both"]).optional().openapi({ description: "Default urls" }),
    webhook_url: z.string().optional().openapi({ format: "uri" }),
    wait: booleanish.optional().openapi({ type: "boolean" }),
  })
  .superRefine((body, ctx) => {
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
      if (body.count === undefined) flag("count mode needs count", "count");
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
    if (body.start !== undefined && body.end !== undefined && body.end <= body.start) {
      flag("end must be greater than start", "end");
    }
  })
  .openapi("CreateJobRequest");

export type CreateJobRequest = z.infer<typeof CreateJobRequestSchema>;

export function inferMode(body: { count?: number; timestamps?: number[] }) {
  if (body.timestamps !== undefined) return "timestamps" as const;
  if (body.count !== undefined) return "count" as const;
  return "interval" as const;
}

export const WaitQuerySchema = z.object({
  wait: booleanish
    .optional()
    .openapi({ type: "boolean", description: "Block up to 50 s for the result" }),
});

export const ListJobsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  skip: z.coerce.number().int().min(0).default(0),
  status: z.enum(LISTABLE_STATUSES).optional(),
});

export const JobIdParamSchema = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
});

export const DemoRequestSchema = z
  .strictObject({ url: z.string().openapi({ format: "uri" }) })
  .openapi("DemoRequest");
