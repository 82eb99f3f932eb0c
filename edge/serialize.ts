// D1 rows → the API's Job and DemoJob shapes.
import type { z } from "@hono/zod-openapi";
import type { DemoJobSchema, FrameSchema, JobSchema, Progress } from "../schema/api.ts";
import type { DemoJobRow, FrameRow, JobRow } from "../schema/db.ts";
import type {
  JobOptions,
  ResultAnimated,
  ResultBudget,
  ResultCaptions,
  ResultStoryboard,
} from "../schema/messages.ts";
import type { FileLinker } from "./files.ts";
import { visibleStatus } from "./jobs/lifecycle.ts";
import { jobNotice } from "./jobs/notice.ts";

type Job = z.infer<typeof JobSchema>;
type DemoJob = z.infer<typeof DemoJobSchema>;
type Frame = z.infer<typeof FrameSchema>;
type JobError = Job["error"];

/** Files are served only while the job is completed and not expired (spec §3). */
export function filesAreLive(row: { status: string; expiresAt: string | null }, now = Date.now()) {
  return row.status === "completed" && row.expiresAt !== null && Date.parse(row.expiresAt) > now;
}

async function framesToApi(
  rows: FrameRow[],
  linker: FileLinker | null,
  withText = false,
): Promise<Frame[]> {
  return Promise.all(
    rows.map(async (f) => ({
      index: f.index,
      timestamp: f.timestamp,
      status: f.status === "ok" ? ("ok" as const) : ("error" as const),
      url: linker && f.key && f.status === "ok" ? await linker.url(f.key) : null,
      error: f.error,
      pts: f.pts,
      // Additions (v1 clients ignore them): present only when the job asked for them.
      ...(f.sceneScore !== null ? { scene_score: f.sceneScore } : {}),
      ...(f.movedReason !== null
        ? { moved_to: f.movedTo, moved_reason: f.movedReason as Frame["moved_reason"] }
        : {}),
      ...(f.caption !== null ? { caption: f.caption } : {}),
      ...(f.score !== null
        ? { score: f.score, score_parts: (f.scoreParts as Frame["score_parts"]) ?? null }
        : {}),
      ...(f.slide !== null && f.slide !== undefined ? { slide: f.slide as Frame["slide"] } : {}),
      // live mode: when the frame was on air (null on a frame the stream never reached).
      ...(f.capturedAtSource
        ? {
            captured_at: f.capturedAt ?? null,
            captured_at_source: f.capturedAtSource as Frame["captured_at_source"],
          }
        : {}),
      // With text: the object read (null on a failed frame); absent when the job did not ask.
      ...(withText ? { text: textOf(f.text) } : {}),
    })),
  );
}

function asksText(options: unknown): boolean {
  return (options as { text?: unknown } | null)?.text === true;
}

/** A frames.text cell: the reading, or JSON null for a frame that failed. */
function textOf(stored: unknown): Frame["text"] {
  return stored && typeof stored === "object" ? (stored as Frame["text"]) : null;
}

/**
 * `progress` is what the job's JobWaiter holds while it runs (edge/jobs/read.ts reads it for
 * processing jobs only); a completed job shows its last progress, from its own row.
 */
export async function jobToApi(
  row: JobRow,
  frameRows: FrameRow[],
  linker: FileLinker | null,
  progress: Progress | null = null,
): Promise<Job> {
  const status = visibleStatus(row) as Job["status"];
  const error = (row.error as JobError) ?? null;
  return {
    id: row.id,
    object: "job",
    status,
    url: row.url,
    platform: row.platform,
    options: row.options as Record<string, unknown>,
    duration_seconds: row.durationSeconds,
    frames_count: row.framesCount,
    frames_failed: row.framesFailed,
    credits_charged: row.creditsCharged,
    width: row.width,
    height: row.height,
    frames: await framesToApi(frameRows, linker, asksText(row.options)),
    zip_url: linker && row.zipKey ? await linker.url(row.zipKey) : null,
    zip_bytes: row.zipBytes,
    requested_resolution: row.requestedResolution,
    delivered_resolution: row.deliveredResolution,
    resolution_note: row.resolutionNote,
    // Written from the job's state when it is read, so it always says what the job is now.
    notice: jobNotice({
      id: row.id,
      status,
      expiresAt: row.expiresAt,
      framesCount: row.framesCount,
      zipped: row.zipKey !== null,
      resolutionNote: row.resolutionNote,
      errorMessage: error?.userMessage ?? null,
      captionsNote: (row.captions as StoredCaptions | null)?.note ?? null,
    }),
    error,
    video: (row.video as Job["video"]) ?? null,
    captions: await captionsToApi(row.captions as StoredCaptions | null, linker),
    storyboard: await storyboardToApi(row.storyboard as ResultStoryboard | null, linker),
    // Asked and not (yet) delivered: null.
    ...(await animatedToApi(row.animated ?? (asksForPreview(row.options) ? {} : null), linker)),
    ...budgetToApi(row.options as JobOptions | null, row.budget as ResultBudget | null),
    // The earlier job whose frames this one was served (decision 0350).
    reused_from: row.reusedFrom ?? null,
    progress: progressToApi(status, row, progress),
    created_at: row.createdAt,
    started_at: row.startedAt,
    completed_at: row.completedAt,
    expires_at: row.expiresAt,
  };
}

/**
 * While processing: the stage and frames the running attempt last reported. Completed (and
 * expired) jobs keep their last progress: finishing, every frame made (frames_count of
 * frames_count), at completed_at. Queued and failed jobs have none (decision 0230).
 */
function progressToApi(status: Job["status"], row: JobRow, live: Progress | null) {
  if (status === "processing") return live;
  if ((status !== "completed" && status !== "expired") || row.framesCount === null) return null;
  return {
    stage: "finishing" as const,
    frames_done: row.framesCount,
    frames_total: row.framesCount,
    updated_at: row.completedAt ?? row.createdAt,
  };
}

/**
 * job.budget, only on jobs that asked for one (decision 0311): the budget asked, and what the
 * extractor chose and measured on the delivered frames (null until the job completes).
 */
function budgetToApi(
  options: JobOptions | null,
  made: ResultBudget | null,
): { budget?: Job["budget"] } {
  if (!options?.budget) return {};
  return {
    budget: {
      tokens: options.budget.tokens,
      model: options.budget.model,
      tokens_estimated: made?.tokens_estimated ?? null,
      per_frame: made?.per_frame ?? null,
      frames: made?.frames ?? null,
      width: made?.width ?? null,
      height: made?.height ?? null,
    },
  };
}

/** jobs.captions (edge/jobs/settle.ts): the file, or why there is none. */
type StoredCaptions = Partial<ResultCaptions> & { note?: string };

async function captionsToApi(
  stored: StoredCaptions | null,
  linker: FileLinker | null,
): Promise<Job["captions"]> {
  if (!stored?.key || !stored.source) return null;
  return {
    url: linker ? await linker.url(stored.key) : null,
    language: stored.language ?? null,
    source: stored.source,
  };
}

/**
 * jobs.animated (the delivered preview) or demo_jobs.animated (what the demo asked, and the
 * preview once delivered): `animated` only on jobs that asked for one, null until delivered.
 */
async function animatedToApi(
  stored: unknown,
  linker: FileLinker | null,
): Promise<{ animated?: Job["animated"] }> {
  if (!stored) return {};
  const made = stored as Partial<ResultAnimated>;
  if (!made.key) return { animated: null };
  return {
    animated: {
      url: linker ? await linker.url(made.key) : null,
      bytes: made.bytes ?? 0,
      frames: made.frames ?? 0,
      width: made.width ?? 0,
      height: made.height ?? 0,
      format: made.format ?? "webp",
      start: made.start ?? 0,
      duration: made.duration ?? 0,
      fps: made.fps ?? 0,
    },
  };
}

async function storyboardToApi(
  stored: ResultStoryboard | null,
  linker: FileLinker | null,
): Promise<Job["storyboard"]> {
  if (!stored) return null;
  const link = (key: string) => (linker ? linker.url(key) : Promise.resolve(null));
  return {
    image_url: await link(stored.image_key),
    sprite_url: await link(stored.sprite_key),
    vtt_url: await link(stored.vtt_key),
    columns: stored.columns,
    rows: stored.rows,
    tile_width: stored.tile_width,
    tile_height: stored.tile_height,
  };
}

export async function demoJobToApi(
  row: DemoJobRow,
  frameRows: FrameRow[],
  linker: FileLinker | null,
): Promise<DemoJob> {
  return {
    id: row.id,
    object: "demo_job",
    status: visibleStatus(row) as DemoJob["status"],
    platform: row.platform,
    duration_seconds: row.durationSeconds,
    frames_count: row.framesCount,
    frames_failed: row.framesFailed,
    width: row.width,
    height: row.height,
    frames: await framesToApi(frameRows, linker),
    error: (row.error as JobError) ?? null,
    created_at: row.createdAt,
    completed_at: row.completedAt,
    expires_at: row.expiresAt,
    ...(await animatedToApi(row.animated, linker)),
  };
}

function asksForPreview(options: unknown): boolean {
  return typeof options === "object" && options !== null && "animated" in options;
}
