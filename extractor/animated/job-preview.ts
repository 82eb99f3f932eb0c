// A job's moving preview: where it starts (asked, or around the best moment of the job's range),
// checked before anything is decoded so a start past the end fails the job at once, uncharged;
// then made (preview.ts) and stored beside the frames as preview.webp or preview.gif.
import { contentTypeOf } from "../../schema/job-files.ts";
import type { AnimatedOptions, ExtractResult } from "../../schema/messages.ts";
import { ExtractError } from "../errors.ts";
import type { PictureSteps } from "../ffmpeg/args.ts";
import type { VideoProbe } from "../ffmpeg/probe.ts";
import { findBestMoment } from "../quality/moments.ts";
import type { PreviewTimes } from "./preview.ts";
import { makePreview, previewStartAround, previewTimes } from "./preview.ts";

export function previewFileName(format: AnimatedOptions["format"]): string {
  return `preview.${format}`;
}

export async function planJobPreview(
  input: string,
  video: VideoProbe,
  options: AnimatedOptions,
  range: { start: number; end: number },
  /** best mode's own best moment, when the job already scored its range. */
  bestMoment: { time: number; shotStart: number } | null | undefined,
  usableSeconds: number,
  signal: AbortSignal,
): Promise<PreviewTimes> {
  let start = options.start;
  if (start === undefined) {
    const moment =
      bestMoment === undefined ? await findBestMoment(input, video, range, signal) : bestMoment;
    start = moment ? previewStartAround(moment, options.duration, range) : range.start;
  }
  const times = previewTimes(options, start, usableSeconds);
  if (!times) {
    const end = Math.round(usableSeconds * 1000) / 1000;
    throw new ExtractError(
      "ExtractionFailed",
      `the animated preview starts at ${start} s, at or past the end of the video (${end} s)`,
      `The moving preview starts at ${start} s, but the video is only ${end} s long. Nothing was charged.`,
    );
  }
  return times;
}

export async function storePreview(
  input: string,
  video: VideoProbe,
  options: AnimatedOptions,
  times: PreviewTimes,
  picture: PictureSteps,
  store: (name: string, bytes: Uint8Array, contentType: string) => Promise<string>,
  signal: AbortSignal,
): Promise<NonNullable<ExtractResult["animated"]>> {
  const made = await makePreview(
    {
      input,
      streamIndex: video.streamIndex,
      startTime: video.startTime,
      timeBase: video.timeBase,
      times,
      picture,
      format: options.format,
    },
    signal,
  );
  const key = await store(
    previewFileName(options.format),
    made.bytes,
    contentTypeOf(previewFileName(options.format)),
  );
  return {
    key,
    bytes: made.bytes.length,
    frames: made.frames,
    width: made.width,
    height: made.height,
    format: options.format,
    start: times.start,
    duration: Math.round((made.frames / times.fps) * 1e6) / 1e6,
    fps: times.fps,
  };
}
