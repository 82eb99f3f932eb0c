// POST /extract's body, validated before anything runs. Mirrors schema/messages.ts's
// ExtractRequest (the edge builds it; the extractor trusts nothing it did not check).
import { z } from "zod";
import type { ExtractRequest } from "../schema/messages.ts";
import { RESOLUTIONS } from "../schema/plans.ts";

const resolution = z.literal(RESOLUTIONS);

const jobOptions = z
  .object({
    mode: z.enum(["interval", "count", "timestamps"]),
    every: z.number().min(0.1).max(3600).optional(),
    count: z.number().int().min(1).optional(),
    timestamps: z.array(z.number().min(0)).min(1).max(500).optional(),
    start: z.number().min(0).optional(),
    end: z.number().positive().optional(),
    format: z.enum(["jpg", "png", "webp"]),
    resolution,
    max_width: z.number().int().min(64).optional(),
    output: z.enum(["urls", "zip", "both"]),
    webhook_url: z.string().optional(),
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

export const extractRequestSchema = z.object({
  job_id: z.string().min(1).max(100),
  kind: z.enum(["job", "demo"]),
  url: z.string().min(1).max(8192),
  platform: z.string().max(100),
  options: jobOptions,
  max_video_seconds: z.number().positive(),
  clip_to_max: z.boolean(),
  max_frames: z.number().int().positive(),
  callback: z.object({ base_url: z.url(), token: z.string().min(1) }),
});

export function parseExtractRequest(
  body: unknown,
): { ok: true; request: ExtractRequest } | { ok: false; issues: string[] } {
  const parsed = extractRequestSchema.safeParse(body);
  if (parsed.success) return { ok: true, request: parsed.data satisfies ExtractRequest };
  return {
    ok: false,
    issues: parsed.error.issues.map(
      (issue) => `${issue.path.join(".") || "body"}: ${issue.message}`,
    ),
  };
}
