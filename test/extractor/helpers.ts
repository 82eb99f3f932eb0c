// Runs real extraction jobs into a temp directory and reads back what came out.
// Failures are expected in these suites; their logs would only bury the test report.
process.env.EXTRACTOR_LOG ??= "silent";

import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { sampleLayoutFromMp4, withByteReader } from "../../extractor/ffmpeg/mp4-index.ts";
import type { UnneededFrames } from "../../extractor/ffmpeg/unneeded-frames.ts";
import type { ExtractionOutcome, ExtractionSettings } from "../../extractor/job.ts";
import { extractFrames } from "../../extractor/job.ts";
import { DirectorySink } from "../../extractor/output/directory-sink.ts";
import type { SourceHandle } from "../../extractor/source-input.ts";
import { localFileSource } from "../../extractor/sources/local-file.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { cacheTmpdir } from "../../scripts/lib/cache-tmpdir.mjs";
import { readImagePattern } from "../support/videos.ts";

export interface JobRun {
  outcome: ExtractionOutcome;
  directory: string;
}

export async function runJob(
  input: string,
  options: Partial<JobOptions>,
  settings: ExtractionSettings & {
    maxVideoSeconds?: number;
    clipToMax?: boolean;
    maxFrames?: number;
    /** The opened source, as the service passes it (its relay can hide pictures). */
    source?: SourceHandle;
  } = {},
): Promise<JobRun> {
  const directory = await mkdtemp(join(tmpdir(), "stills-extract-"));
  const outcome = await extractFrames(
    {
      input,
      options: { mode: "interval", format: "jpg", resolution: 1080, output: "urls", ...options },
      maxVideoSeconds: settings.maxVideoSeconds ?? 3600,
      clipToMax: settings.clipToMax ?? false,
      maxFrames: settings.maxFrames ?? 10_000,
      source: settings.source ?? null,
    },
    new DirectorySink(directory),
    settings,
  );
  return { outcome, directory };
}

/** The frame number drawn in each delivered frame (null for error frames), in index order. */
export async function deliveredNumbers(run: JobRun): Promise<(number | null)[]> {
  const numbers: (number | null)[] = [];
  for (const frame of run.outcome.frames) {
    if (frame.status !== "ok" || !frame.key) {
      numbers.push(null);
      continue;
    }
    const pattern = await readImagePattern(await readFile(join(run.directory, frame.key)));
    numbers.push(pattern.number);
  }
  return numbers;
}

export async function frameBytes(run: JobRun, index: number): Promise<Buffer> {
  const frame = run.outcome.frames.find((f) => f.index === index);
  if (!frame?.key) throw new Error(`frame ${index} was not delivered`);
  return readFile(join(run.directory, frame.key));
}

/** Index of the frame on screen at t in a constant-rate video: last n with n/fps ≤ t. */
export function cfrFrameAt(t: number, fps: number): number {
  return Math.floor(t * fps + 1e-9);
}

// ——— Generated clips and reference pictures for the quality modes (issue 14) ———

/**
 * A clip made by one ffmpeg filter graph from lavfi sources (cached by name and graph), H.264
 * in MP4. `inputs` are lavfi source specs; `graph` joins them into [v].
 */
export async function makeLavfiClip(
  name: string,
  inputs: string[],
  graph: string,
  encode: string[] = ["-c:v", "libx264", "-g", "50", "-bf", "2", "-pix_fmt", "yuv420p"],
): Promise<string> {
  const { createHash } = await import("node:crypto");
  const { mkdir, stat } = await import("node:fs/promises");
  const digest = createHash("sha256")
    .update(JSON.stringify([inputs, graph, encode]))
    .digest("hex")
    .slice(0, 12);
  const directory = join(cacheTmpdir(), "stills-quality-clips");
  await mkdir(directory, { recursive: true });
  const path = join(directory, `${name}-${digest}.mp4`);
  if (
    await stat(path).then(
      () => true,
      () => false,
    )
  )
    return path;
  const partial = `${path}.${process.pid}.part.mp4`;
  await runMediaTool("ffmpeg", [
    "-v",
    "error",
    "-y",
    ...inputs.flatMap((spec) => ["-f", "lavfi", "-i", spec]),
    "-filter_complex",
    graph,
    "-map",
    "[v]",
    ...encode,
    partial,
  ]);
  const { rename } = await import("node:fs/promises");
  await rename(partial, path);
  return path;
}

/**
 * The decoded pictures with presentation times `pts` (seconds), as RGB24, by ffmpeg alone: one
 * decode from the start that keeps the frames at those times, in the order asked.
 */
export async function referencePictures(
  video: string,
  pts: number[],
  size: { width: number; height: number },
): Promise<Buffer[]> {
  // One selected frame per distinct time: times within the selection's ±0.5 ms of each other
  // (a rounded "frame before", say) are one frame, not a frame that seems to be missing.
  const times: number[] = [];
  for (const t of [...pts].sort((a, b) => a - b)) {
    if (times.length === 0 || t - (times.at(-1) as number) >= 0.001) times.push(t);
  }
  if (times.length === 0) return [];
  const chosen = times.map((t) => `lt(abs(t-${t}),0.0005)`).join("+");
  const bytes = await runMediaTool(
    "ffmpeg",
    [
      ...["-v", "error", "-i", video],
      ...["-vf", `select='${chosen}',scale=${size.width}:${size.height}`],
      ...["-fps_mode", "passthrough", "-frames:v", String(times.length)],
      ...["-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
    ],
    true,
  );
  const frameBytes = size.width * size.height * 3;
  if (bytes.length !== frameBytes * times.length) {
    const found = Math.floor(bytes.length / frameBytes);
    throw new Error(`${found} of ${times.length} frames at pts ${times.join(", ")} in ${video}`);
  }
  return pts.map((t) => {
    const at = times.findIndex((kept) => Math.abs(kept - t) < 0.001) * frameBytes;
    return bytes.subarray(at, at + frameBytes);
  });
}

/** An image file's pixels as RGB24. */
export async function rgbPixels(
  bytes: Uint8Array,
): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(bytes)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Mean absolute difference of two equal-size pictures, 0…255. */
export function meanAbsoluteDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new Error(`sizes differ: ${a.length} vs ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

/** Mean luma (BT.601 weights) of RGB24 pixels. */
export function meanLuma(rgb: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < rgb.length; i += 3)
    sum += 0.299 * rgb[i] + 0.587 * rgb[i + 1] + 0.114 * rgb[i + 2];
  return sum / (rgb.length / 3);
}

/** Every frame's pts (seconds) as ffprobe lists them, optionally keyframes only. */
export async function ffprobeFrameTimes(video: string, keyframesOnly: boolean): Promise<number[]> {
  const text = await runMediaTool("ffprobe", [
    "-v",
    "error",
    ...(keyframesOnly ? ["-skip_frame", "nokey"] : []),
    "-select_streams",
    "v:0",
    "-show_entries",
    "frame=pts_time",
    "-of",
    "csv=p=0",
    video,
  ]);
  return String(text)
    .split("\n")
    .map((line) => line.replace(/,+$/, "").trim())
    .filter((line) => line !== "")
    .map(Number);
}

async function runMediaTool(tool: string, args: string[], binary?: false): Promise<string>;
async function runMediaTool(tool: string, args: string[], binary: true): Promise<Buffer>;
async function runMediaTool(
  tool: string,
  args: string[],
  binary = false,
): Promise<string | Buffer> {
  const { execFile } = await import("node:child_process");
  return new Promise((resolve, reject) => {
    execFile(
      tool,
      args,
      { encoding: "buffer", maxBuffer: 512 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${tool} failed: ${stderr.toString().slice(-2000)}`));
        else resolve(binary ? stdout : stdout.toString("utf8"));
      },
    );
  });
}

/**
 * A local file's source whose relay lets `look` see (and change) what each decode run may
 * leave out, before the run's address is made.
 */
export function watchedHidingSource(
  video: string,
  look: (frames: UnneededFrames) => void,
): SourceHandle {
  const source = localFileSource(video);
  const open = source.hidingRelay?.bind(source);
  if (!open) throw new Error("a local file source can hide pictures");
  source.hidingRelay = async () => {
    const relay = await open();
    return {
      withoutUnneededFrames: (frames) => {
        look(frames);
        return relay.withoutUnneededFrames(frames);
      },
      withSpans: (view, frames) => {
        if (frames) look(frames);
        return relay.withSpans(view, frames);
      },
    };
  };
  return source;
}

/**
 * A local file's source whose relay hides the very frames the index says are on screen: an
 * index wrong about this file, as decode runs must notice (decode.ts IndexDisagreed).
 * `misled()` counts the kept frames it took away.
 */
export async function misreadingSource(video: string) {
  const layout = await withByteReader(video, undefined, sampleLayoutFromMp4);
  if (!layout) throw new Error(`${video} has no H.264 sample layout`);
  let misled = 0;
  const source = watchedHidingSource(video, (frames) => {
    for (const sample of [...frames.keep]) {
      if (sample !== 0 && frames.shownAt.includes(layout.pts[sample])) {
        frames.keep.delete(sample);
        misled++;
      }
    }
  });
  return { source, misled: () => misled };
}
