// The moving preview (`animated`, issue 39): one ffmpeg run decodes the range once, picks the
// picture on screen at start + k/fps exactly as the frame engine picks a frame (the same slot
// chain: ffmpeg/args.ts decodeFilterGraph), turns it upright and SDR with the same picture steps
// as every frame, and encodes an animated WebP (libwebp) or a GIF with a palette made for this
// clip, looping for ever. The file stays under ANIMATED_LIMITS.max_bytes: an encoding that grows
// past it is stopped and made again smaller (narrower, and for WebP at a lower quality).

import { ANIMATED_LIMITS } from "../../schema/api.ts";
import type { AnimatedOptions } from "../../schema/messages.ts";
import { ExtractError } from "../errors.ts";
import type { PictureSteps, Rational } from "../ffmpeg/args.ts";
import { formatSeconds, pictureFilters, safeInputArgs } from "../ffmpeg/args.ts";
import { failedRun, startTool } from "../ffmpeg/process.ts";
import { slotsBeforeExpression } from "../slots.ts";

/** Where the preview lies in the source: seconds from its first frame. */
export interface PreviewTimes {
  start: number;
  /** Pictures: one per 1/fps from start, only those before the end of the video. */
  frames: number;
  fps: number;
}

/** The preview's moments; a start at or past the end is the caller's error (null). */
export function previewTimes(
  options: AnimatedOptions,
  start: number,
  videoSeconds: number,
): PreviewTimes | null {
  if (!(start < videoSeconds)) return null;
  const asked = Math.max(1, Math.round(options.duration * options.fps));
  // Only moments before the end: each k with start + k/fps < the video's end.
  const fit = Math.ceil((videoSeconds - start) * options.fps - 1e-9);
  return { start, frames: Math.max(1, Math.min(asked, fit)), fps: options.fps };
}

/**
 * Where a preview without a start begins: around the best moment, inside its shot. Half the
 * duration before the best candidate, not before its shot's start, and early enough to end by
 * the range's end when the range is long enough.
 */
export function previewStartAround(
  best: { time: number; shotStart: number },
  duration: number,
  range: { start: number; end: number },
): number {
  let start = Math.max(best.shotStart, best.time - duration / 2);
  start = Math.min(start, range.end - duration);
  return round6(Math.max(range.start, start));
}

/** Width as asked (never above the picture's own), height by the aspect; both even. */
export function previewSize(
  askedWidth: number,
  display: { width: number; height: number },
): { width: number; height: number } {
  const even = (x: number) => Math.max(2, 2 * Math.round(x / 2));
  const width = even(Math.min(askedWidth, display.width));
  return { width, height: even((width * display.height) / display.width) };
}

export interface PreviewRun {
  input: string;
  streamIndex: number;
  /** The video's first frame, absolute seconds, and its time base. */
  startTime: number;
  timeBase: Rational;
  times: PreviewTimes;
  picture: PictureSteps;
  format: AnimatedOptions["format"];
  /** WebP quality, 0–100. */
  quality: number;
}

export function previewArgs(run: PreviewRun): string[] {
  const { num, den } = run.timeBase;
  const first = run.startTime + run.times.start;
  const slots = { kind: "grid" as const, first, step: 1 / run.times.fps, count: run.times.frames };
  const chain = [
    `[0:${run.streamIndex}]setpts='${slotsBeforeExpression(slots)}'`,
    `fps=fps=${den}/${num}:start_time=0:round=up`,
    ...pictureFilters(run.picture),
    // One picture every 1/fps of a second in the file, whatever the source's clock.
    `settb=expr=1/${run.times.fps}`,
    "setpts=N",
  ].join(",");
  const graph =
    run.format === "gif"
      ? `${chain},split[a][b];[a]palettegen=stats_mode=full[p];[b][p]paletteuse=dither=bayer:bayer_scale=3[v]`
      : `${chain}[v]`;
  const encoder =
    run.format === "gif"
      ? ["-loop", "0", "-f", "gif"]
      : [
          "-c:v",
          "libwebp_anim",
          "-lossless",
          "0",
          "-quality",
          String(run.quality),
          "-loop",
          "0",
          "-f",
          "webp",
        ];
  return [
    "-hide_banner",
    "-nostdin",
    "-nostats",
    "-loglevel",
    "level+info",
    "-noautorotate",
    "-copyts",
    // Lands on the keyframe at or before the start; the slot chain picks from there on.
    "-ss",
    formatSeconds(first),
    "-seek_timestamp",
    "1",
    "-noaccurate_seek",
    ...safeInputArgs(run.input),
    "-an",
    "-sn",
    "-dn",
    "-filter_complex",
    graph,
    "-map",
    "[v]",
    "-fps_mode",
    "passthrough",
    "-frames:v",
    String(run.times.frames),
    ...encoder,
    "pipe:1",
  ];
}

export interface MadePreview {
  bytes: Buffer;
  width: number;
  height: number;
  frames: number;
}

const WEBP_QUALITIES = [75, 50, 30];

/** Runs the preview, making it again smaller while it grows past the bound. */
export async function makePreview(
  run: Omit<PreviewRun, "quality">,
  signal?: AbortSignal,
  maxBytes: number = ANIMATED_LIMITS.max_bytes,
): Promise<MadePreview> {
  let picture = run.picture;
  for (const quality of WEBP_QUALITIES) {
    const bytes = await encodeWithin({ ...run, picture, quality }, maxBytes, signal);
    if (bytes)
      return { bytes, width: picture.width, height: picture.height, frames: run.times.frames };
    // Three quarters of the width: a little over half the pixels.
    picture = { ...picture, ...smaller(picture) };
  }
  throw new ExtractError(
    "ExtractionFailed",
    `the animated preview stayed above ${maxBytes} bytes`,
    "The moving preview would be too large. Try a shorter duration, a lower fps or WebP.",
  );
}

function smaller(size: { width: number; height: number }) {
  const even = (x: number) => Math.max(2, 2 * Math.round(x / 2));
  return { width: even(size.width * 0.75), height: even(size.height * 0.75) };
}

/** The encoded file, or null when it grew past maxBytes (the run is stopped there). */
async function encodeWithin(
  run: PreviewRun,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Buffer | null> {
  const running = startTool("ffmpeg", previewArgs(run), { signal });
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  running.stdout.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) {
      tooLarge = true;
      running.kill();
    } else chunks.push(chunk);
  });
  const exit = await running.exited;
  if (tooLarge) return null;
  if (exit.code !== 0) throw failedRun("ffmpeg", running, exit, signal);
  return Buffer.concat(chunks);
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
