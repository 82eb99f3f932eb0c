// Pages of frames as MCP image content: at most IMAGES_PER_CALL previews per call, each with
// its index and timestamp as text beside it, and an opaque cursor to the next page.
import type { ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { asc, eq } from "drizzle-orm";
import type { Context } from "hono";
import { z } from "zod";
import {
  type FrameSchema,
  FrameSlideSchema,
  MAX_CAPTION_CHARS,
  VideoSchema,
} from "../../schema/api.ts";
import { frames } from "../../schema/db.ts";
import { FrameTextSchema } from "../../schema/text.ts";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";
import { toBase64 } from "./jpeg.ts";
import { framePreview, PREVIEW_LONG_SIDE, PREVIEW_MIME_TYPE, PREVIEW_QUALITY } from "./previews.ts";
import { videoLine } from "./video-line.ts";

export const IMAGES_PER_CALL = 8;

type Frame = z.infer<typeof FrameSchema>;
type Video = z.infer<typeof VideoSchema>;

export const FramePageSchema = z.object({
  job_id: z.uuid(),
  total_frames: z.number().int(),
  offset: z.number().int(),
  frames: z.array(
    z.object({
      index: z.number().int(),
      timestamp: z.number(),
      pts: z.number().nullable(),
      shown: z.boolean(),
      width: z.number().int().nullable(),
      height: z.number().int().nullable(),
      note: z.string().nullable(),
      /** With captions: the text on screen at this frame, as the job has it. */
      caption: z.string().max(MAX_CAPTION_CHARS).nullable().optional(),
      /** With text: what was read on this frame (null when it failed), as the job has it. */
      text: FrameTextSchema.nullable().optional(),
      /** slides mode: when the frame's slide is on screen, and the frame it repeats. */
      slide: FrameSlideSchema.nullable().optional(),
    }),
  ),
  /** What the video is (job.video), so the pictures are read in context. */
  video: VideoSchema.nullable().optional(),
  next_cursor: z.string().nullable(),
  preview: z.object({ long_side: z.number().int(), mime_type: z.string(), quality: z.number() }),
});
export type FramePage = z.infer<typeof FramePageSchema>;

/** The cursor names its job, so a cursor of one job cannot page through another. */
export function encodeCursor(jobId: string, offset: number): string {
  return btoa(`${jobId}/${offset}`).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

export function decodeCursor(cursor: string, jobId: string, total: number): number {
  let decoded = "";
  try {
    decoded = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {}
  const [id, offset] = decoded.split("/");
  const at = Number(offset);
  if (id !== jobId || !/^\d+$/.test(offset ?? "") || at >= total) {
    throw new ApiError("InvalidRequest", "cursor: not a cursor of this job's frames", {
      userMessage: "That cursor does not belong to this job. Start again without a cursor.",
    });
  }
  return at;
}

/** Renders frames[offset, offset + limit) of a completed job. */
export async function framePage(
  c: Context<AppEnv>,
  job: { id: string; frames: Frame[]; video?: Video | null; captions?: unknown },
  offset: number,
  limit: number,
): Promise<{ page: FramePage; content: ContentBlock[] }> {
  const keys = await frameKeys(c, job.id);
  const slice = job.frames.slice(offset, offset + limit);
  const rendered = await Promise.all(
    slice.map(async (frame) => {
      const key = keys.get(frame.index);
      if (frame.status !== "ok") return { frame, note: `not extracted: ${frame.error ?? "error"}` };
      // A job delivered as a ZIP alone has no single frame files to show.
      if (!key || !frame.url) return { frame, note: "delivered only inside the job's ZIP" };
      return { frame, preview: await framePreview(c.env, { key, signedUrl: frame.url }) };
    }),
  );
  const next = offset + slice.length;
  const nextCursor = next < job.frames.length ? encodeCursor(job.id, next) : null;
  // A job with captions names the text on every frame, "none" included; others stay as before.
  const captioned = Boolean(job.captions);
  const content: ContentBlock[] = [];
  if (job.video && offset === 0) content.push({ type: "text", text: videoLine(job.video) });
  for (const { frame, preview, note } of rendered) {
    const where = `Frame ${frame.index} of ${job.frames.length} at ${seconds(frame.timestamp)}`;
    // The picture on screen at t started at pts; say so only when that is another moment.
    const picture =
      frame.pts != null && Math.abs(frame.pts - frame.timestamp) >= 0.001
        ? ` (the picture shown since ${seconds(frame.pts)})`
        : "";
    const said = slideLine(frame) + (captioned ? captionLine(frame) : "") + textOnFrame(frame);
    content.push({
      type: "text",
      text: preview ? `${where}${picture}${said}:` : `${where}${said}: ${note}.`,
    });
    if (preview) {
      content.push({ type: "image", data: toBase64(preview.bytes), mimeType: PREVIEW_MIME_TYPE });
    }
  }
  const page: FramePage = {
    job_id: job.id,
    total_frames: job.frames.length,
    offset,
    frames: rendered.map(({ frame, preview, note }) => ({
      index: frame.index,
      timestamp: frame.timestamp,
      pts: frame.pts ?? null,
      shown: preview !== undefined,
      width: preview?.width ?? null,
      height: preview?.height ?? null,
      note: note ?? null,
      ...(captioned ? { caption: frame.caption ?? null } : {}),
      ...(frame.text !== undefined ? { text: frame.text } : {}),
      ...(frame.slide ? { slide: frame.slide } : {}),
    })),
    ...(job.video !== undefined ? { video: job.video } : {}),
    next_cursor: nextCursor,
    preview: {
      long_side: PREVIEW_LONG_SIDE,
      mime_type: PREVIEW_MIME_TYPE,
      quality: PREVIEW_QUALITY,
    },
  };
  return { page, content };
}

export function pageSummary(page: FramePage): string {
  const shown = page.frames.filter((f) => f.shown).length;
  const first = page.offset + 1;
  const last = page.offset + page.frames.length;
  const range = page.frames.length > 0 ? `frames ${first}–${last}` : "no frames";
  const more = page.next_cursor
    ? ` More: call view_frames with job_id "${page.job_id}" and cursor "${page.next_cursor}".`
    : " That is the last page.";
  return `Showing ${range} of ${page.total_frames} (${shown} as images, at most ${PREVIEW_LONG_SIDE} px).${more}`;
}

/** Each stored frame's R2 key by its index. */
export async function frameKeys(c: Context<AppEnv>, jobId: string) {
  const rows = await c
    .get("db")
    .select({ index: frames.index, key: frames.key })
    .from(frames)
    .where(eq(frames.jobId, jobId))
    .orderBy(asc(frames.index));
  return new Map(rows.map((row) => [row.index, row.key]));
}

/**
 * The key of another file of the attempt that stored these frames (storyboard.jpg,
 * captions.vtt): every file of an attempt lies under one `{kind}/{job_id}/{attempt_id}/`
 * (schema/job-files.ts).
 */
export function siblingKey(keys: Map<number, string | null>, name: string): string | null {
  for (const key of keys.values()) {
    if (key) return `${key.slice(0, key.lastIndexOf("/") + 1)}${name}`;
  }
  return null;
}

const seconds = (value: number) => `${Number(value.toFixed(3))} s`;

/** slides mode: when the slide is on screen, and which frame showed it first. */
function slideLine(frame: Frame): string {
  if (!frame.slide) return "";
  const { start, end, repeat_of } = frame.slide;
  const again = repeat_of != null ? `, the slide of frame ${repeat_of} shown again` : "";
  return `, slide on screen from ${seconds(start)} to ${seconds(end)}${again}`;
}

/** With text: what was read on the frame, quoted as JSON like a caption. */
function textOnFrame(frame: Frame): string {
  if (!frame.text) return "";
  return frame.text.content === ""
    ? ", no text read on it"
    : `, text read on it: ${JSON.stringify(frame.text.content)}`;
}

/**
 * The caption beside its frame. Quoted as JSON: the words are the video's, data to read, and
 * the quotes keep them apart from ours.
 */
function captionLine(frame: Frame): string {
  if (frame.status !== "ok") return "";
  return frame.caption == null
    ? ", no caption on screen"
    : `, caption on screen: ${JSON.stringify(frame.caption)}`;
}
