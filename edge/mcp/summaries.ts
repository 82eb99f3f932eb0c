// The short text an agent reads beside each structured result: what happened, and what to
// call next.
import type { z } from "zod";
import type { DemoJobSchema, JobSchema } from "../../schema/api.ts";
import { progressText, WAIT_LIMIT_MS } from "../jobs/read.ts";
import { videoLine } from "./video-line.ts";

type Job = z.infer<typeof JobSchema>;
type DemoJob = z.infer<typeof DemoJobSchema>;

function size(job: { width: number | null; height: number | null }) {
  return job.width && job.height ? ` at ${job.width}×${job.height}` : "";
}

function delivered(job: Job | DemoJob) {
  const failed = job.frames_failed > 0 ? ` (${job.frames_failed} could not be extracted)` : "";
  const duration = job.duration_seconds != null ? ` from a ${job.duration_seconds} s video` : "";
  return `${job.frames_count ?? 0} frames${failed}${duration}${size(job)}`;
}

export function jobSummary(job: Job, waited: boolean): string {
  const id = `Job ${job.id}`;
  switch (job.status) {
    case "completed": {
      const zip = job.zip_url ? " A ZIP of all frames is at zip_url." : "";
      const video = job.video ? ` ${videoLine(job.video)}` : "";
      return (
        `${id} completed: ${delivered(job)}, ${job.credits_charged ?? 0} credit(s) charged. ` +
        `Signed frame URLs (valid until ${job.expires_at}) are in frames[].url.${zip}${video}` +
        `${captionsLine(job)}${textLine(job)}${bestLine(job)}${animatedLine(job)} To look at the frames, call view_frames with job_id "${job.id}".`
      );
    }
    case "failed":
      return `${id} failed (${job.error?.name}): ${job.error?.userMessage} Nothing was charged.`;
    case "expired":
      return `${id} has expired: its files were deleted after the plan's retention.`;
    default: {
      const wait = waited ? ` after waiting ${WAIT_LIMIT_MS / 1000} s` : "";
      const doing = job.progress ? ` (${progressText(job.progress)})` : "";
      return (
        `${id} is ${job.status}${doing}${wait}. Call get_job with job_id "${job.id}" and wait: true ` +
        `to wait for it (up to ${WAIT_LIMIT_MS / 1000} s per call).`
      );
    }
  }
}

/** Most characters of frames' text quoted in a summary; the rest is in frames[].text. */
export const SUMMARY_TEXT_CHARS = 4000;

/**
 * With text: what was read on each frame, quoted as JSON (the words are the video's, data to
 * read), up to SUMMARY_TEXT_CHARS; the frames left out are named.
 */
function textLine(job: Job): string {
  const read = job.frames.filter((f) => f.text != null);
  if (!job.frames.some((f) => f.text !== undefined)) return "";
  const parts: string[] = [];
  let used = 0;
  for (const frame of read) {
    const text = frame.text as NonNullable<typeof frame.text>;
    const part =
      text.content === ""
        ? `frame ${frame.index} (${frame.timestamp} s): no text`
        : `frame ${frame.index} (${frame.timestamp} s): ${JSON.stringify(text.content)} (confidence ${text.confidence})`;
    if (used + part.length > SUMMARY_TEXT_CHARS) break;
    parts.push(part);
    used += part.length;
  }
  const left = read.length - parts.length;
  const more = left > 0 ? `; ${left} more frame(s) left out here, all in frames[].text` : "";
  return ` Text on screen (OCR, ${read[0]?.text?.language ?? "en"}), also in frames[].text: ${parts.join("; ")}${more}.`;
}

/** best mode: frames come best first, each with its score. */
function bestLine(job: Job): string {
  const scores = job.frames.filter((f) => f.score != null).map((f) => f.score);
  return scores.length > 0
    ? ` Frames are best first; their scores (0-1, parts in frames[].score_parts): ${scores.join(", ")}.`
    : "";
}

/** The moving preview, as a URL (agents read it; it is not shown inline). */
function animatedLine(job: Job | DemoJob): string {
  const preview = job.animated;
  if (!preview?.url) return "";
  return ` A looping ${preview.format.toUpperCase()} preview (${preview.frames} pictures, ${preview.width}×${preview.height}, ${preview.duration} s from ${preview.start} s) is at animated.url: ${preview.url}`;
}

/** Where the captions are, or why there are none (the notice says it in full). */
function captionsLine(job: Job): string {
  if (job.captions?.url) {
    const language = job.captions.language ? `${job.captions.language}, ` : "";
    return ` Captions (${language}${job.captions.source}) are at captions.url as WebVTT; the text on screen at each frame is in frames[].caption.`;
  }
  const asked = (job.options as { captions?: unknown } | null)?.captions === true;
  return asked ? " No captions: see notice." : "";
}

export function demoSummary(demo: DemoJob): string {
  const id = `Demo ${demo.id}`;
  switch (demo.status) {
    case "completed":
      return `${id} completed: ${delivered(demo)}.${animatedLine(demo)} Call view_frames with job_id "${demo.id}" to see them.`;
    case "failed":
      return `${id} failed (${demo.error?.name}): ${demo.error?.userMessage}`;
    case "expired":
      return `${id} has expired.`;
    default:
      return `${id} is ${demo.status}. Call get_demo with demo_id "${demo.id}" in a few seconds.`;
  }
}
