// Test videos made with ffmpeg's lavfi sources, shared by every Node suite. Each frame shows its
// own number as a 4×4 grid of black/white cells (12 data bits + 4 corner markers, top-left
// white), big enough to survive scaling and JPEG, so a test can read back which frame it got
// and whether it is upright. Videos are cached on disk by their spec.
import { execFile } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdir, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { cacheTmpdir } from "../../scripts/lib/cache-tmpdir.mjs";

const run = promisify(execFile);
const GENERATOR_VERSION = 4;
export const VIDEO_CACHE_DIR = join(cacheTmpdir(), `stills-test-videos-v${GENERATOR_VERSION}`);

export interface TestVideoSpec {
  /** Display size (what a player shows, after rotation). */
  width?: number;
  height?: number;
  /** Frames per second, or a rational such as "30000/1001". */
  fps?: number | string;
  durationSeconds?: number;
  codec?: "h264" | "hevc" | "vp9";
  container?: "mp4" | "mov" | "webm" | "mkv";
  /** Keyframe interval in frames. */
  gop?: number;
  bframes?: number;
  /** Clockwise degrees a player must turn the stored picture (display matrix). */
  rotation?: 0 | 90 | 180 | 270;
  pixelFormat?: "yuv420p" | "yuv420p10le";
  /** Timestamp of the first frame, seconds. */
  startTime?: number;
  /** Frames at uneven times: see vfrFrameTime. */
  variableFrameRate?: boolean;
  audio?: boolean;
  /** Stored as HDR (BT.2020, 10-bit HEVC) with diffuse white at 203 nits. */
  hdr?: "pq" | "hlg";
  /**
   * Film grain over the pattern (the pattern still reads): frames that do not compress to
   * almost nothing, so a GOP spans many 64 KiB blocks as in a real upload.
   */
  grain?: boolean;
  /** H.264 with open GOPs: keyframes after the first are I-frames, not IDR pictures. */
  openGop?: boolean;
}

type FullSpec = Required<Omit<TestVideoSpec, "hdr" | "grain" | "openGop">> &
  Pick<TestVideoSpec, "hdr" | "grain" | "openGop">;

const DEFAULTS: FullSpec = {
  width: 320,
  height: 180,
  fps: 30,
  durationSeconds: 2,
  codec: "h264",
  container: "mp4",
  gop: 30,
  bframes: 2,
  rotation: 0,
  pixelFormat: "yuv420p",
  startTime: 0,
  variableFrameRate: false,
  audio: false,
};

/** Durations of frames 0,1,2,3 of each cycle of 4 in a variable-frame-rate video, in 1/60 s. */
const VFR_TICKS = [2, 6, 1, 15];
const VFR_CYCLE_TICKS = 24;
export const VFR_CYCLE = VFR_TICKS.map((ticks) => ticks / 60);

/** Presentation time of frame n (from the first frame) in a variable-frame-rate test video. */
export function vfrFrameTime(n: number): number {
  let ticks = Math.floor(n / 4) * VFR_CYCLE_TICKS;
  for (let i = 0; i < n % 4; i++) ticks += VFR_TICKS[i];
  return ticks / 60;
}

const MARKER_CELLS = [0, 3, 12, 15];
const DATA_CELLS = [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14];

function patternFilters(width: number, height: number): string[] {
  const cw = Math.floor(width / 4);
  const ch = Math.floor(height / 4);
  const box = (cell: number, enable?: string) => {
    const x = (cell % 4) * cw;
    const y = Math.floor(cell / 4) * ch;
    const when = enable ? `:enable='${enable}'` : "";
    return `drawbox=x=${x}:y=${y}:w=${cw}:h=${ch}:color=white:t=fill${when}`;
  };
  return [box(0), ...DATA_CELLS.map((cell, bit) => box(cell, `mod(floor(n/${2 ** bit}),2)`))];
}

// Stored picture = the upright one turned counterclockwise, so a clockwise display turn restores
// it. ffmpeg 5.1 writes the tag "rotate=R" as a matrix that turns R° counterclockwise.
const UNDO_DISPLAY_TURN: Record<number, string[]> = {
  0: [],
  90: ["transpose=cclock"],
  180: ["hflip", "vflip"],
  270: ["transpose=clock"],
};

function codecArgs(spec: FullSpec): string[] {
  const gop = String(spec.gop);
  if (spec.codec === "vp9") {
    return [
      "-c:v",
      "libvpx-vp9",
      "-deadline",
      "realtime",
      "-cpu-used",
      "8",
      "-g",
      gop,
      "-b:v",
      "400k",
    ];
  }
  if (spec.codec === "hevc") {
    const params = `log-level=error:keyint=${gop}:min-keyint=${gop}:bframes=${spec.bframes}`;
    return ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", params];
  }
  return [
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-bf",
    String(spec.bframes),
    "-g",
    gop,
    "-keyint_min",
    gop,
    "-sc_threshold",
    "0",
    ...(spec.openGop ? ["-x264-params", "open-gop=1"] : []),
    ...(spec.pixelFormat === "yuv420p10le" ? ["-profile:v", "high10"] : []),
  ];
}

function hdrArgs(spec: FullSpec): { filters: string[]; tags: string[] } {
  if (!spec.hdr) return { filters: [], tags: [] };
  const trc = spec.hdr === "pq" ? "smpte2084" : "arib-std-b67";
  return {
    filters: [
      "format=gbrpf32le",
      // zscale also does the RGB → YCbCr step, with the BT.2020 matrix.
      `zscale=tin=bt709:pin=bt709:rin=full:t=${trc}:p=bt2020:m=bt2020nc:r=tv:npl=203`,
    ],
    tags: ["-color_primaries", "bt2020", "-color_trc", trc, "-colorspace", "bt2020nc"],
  };
}

/** Makes (or reuses) a test video and returns its path. */
/** A temporary name beside `path`, apart from any other call's (another test worker's too). */
function temporaryPath(path: string, extension: string): string {
  return `${path}.${randomUUID().slice(0, 8)}.tmp.${extension}`;
}

export async function makeTestVideo(partial: TestVideoSpec = {}): Promise<string> {
  const spec: FullSpec = { ...DEFAULTS, ...partial } as FullSpec;
  if (spec.hdr) spec.codec = "hevc";
  if (spec.hdr) spec.pixelFormat = "yuv420p10le";
  const key = createHash("sha1").update(JSON.stringify(spec)).digest("hex").slice(0, 12);
  const path = join(VIDEO_CACHE_DIR, `${key}.${spec.container}`);
  if (await exists(path)) return path;
  await mkdir(VIDEO_CACHE_DIR, { recursive: true });
  const hdr = hdrArgs(spec);
  const timing = spec.variableFrameRate
    ? [`settb=1/60,setpts='floor(N/4)*${VFR_CYCLE_TICKS}+${vfrPartial()}'`]
    : [];
  const filters = [
    ...patternFilters(spec.width, spec.height),
    ...(spec.grain ? ["noise=alls=24:allf=t"] : []),
    ...timing,
    ...UNDO_DISPLAY_TURN[spec.rotation],
    ...hdr.filters,
    `format=${spec.pixelFormat}`,
  ];
  const rate = spec.variableFrameRate ? 60 : spec.fps;
  const frames = spec.variableFrameRate
    ? Math.ceil((spec.durationSeconds * 60 * 4) / VFR_CYCLE_TICKS)
    : null;
  // Two test files asking for the same video at once each write their own file, and the
  // rename that publishes it is atomic.
  const encoded = temporaryPath(path, spec.container);
  const args = [
    "-hide_banner",
    "-loglevel",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    `color=c=black:s=${spec.width}x${spec.height}:r=${rate}`,
    ...(spec.audio
      ? ["-f", "lavfi", "-i", `sine=frequency=440:duration=${spec.durationSeconds}`]
      : []),
    "-vf",
    filters.join(","),
    ...(frames === null ? ["-t", String(spec.durationSeconds)] : ["-frames:v", String(frames)]),
    ...codecArgs(spec),
    "-pix_fmt",
    spec.pixelFormat,
    ...hdr.tags,
    ...(spec.variableFrameRate
      ? ["-fps_mode", "passthrough", "-video_track_timescale", "600"]
      : []),
    ...(spec.audio ? ["-c:a", spec.container === "webm" ? "libopus" : "aac", "-shortest"] : []),
    ...(spec.startTime ? ["-output_ts_offset", String(spec.startTime)] : []),
    encoded,
  ];
  await run("ffmpeg", args);
  if (spec.rotation) {
    // ffmpeg 5.1 writes the display matrix only when remuxing, not while encoding.
    const rotated = temporaryPath(path, spec.container);
    const tag = `rotate=${(360 - spec.rotation) % 360}`;
    await run("ffmpeg", [
      "-loglevel",
      "error",
      "-y",
      "-i",
      encoded,
      "-map",
      "0",
      "-c",
      "copy",
      "-metadata:s:v:0",
      tag,
      ...(spec.startTime ? ["-copyts"] : []),
      rotated,
    ]);
    await rename(rotated, encoded);
  }
  await rename(encoded, path);
  return path;
}

function vfrPartial(): string {
  return [1, 2, 3].map((k) => `gte(mod(N,4),${k})*${VFR_TICKS[k - 1]}`).join("+");
}

/** An audio-only file (no video stream at all). */
export async function makeAudioOnly(): Promise<string> {
  const path = join(VIDEO_CACHE_DIR, "audio-only.m4a");
  if (await exists(path)) return path;
  await mkdir(VIDEO_CACHE_DIR, { recursive: true });
  const encoded = temporaryPath(path, "m4a");
  await run("ffmpeg", [
    "-hide_banner",
    "-loglevel",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    "sine=duration=2",
    "-c:a",
    "aac",
    encoded,
  ]);
  await rename(encoded, path);
  return path;
}

/** A file made of the given bytes (zero-byte, truncated or garbage inputs). */
export async function makeFileWithBytes(name: string, bytes: Uint8Array): Promise<string> {
  await mkdir(VIDEO_CACHE_DIR, { recursive: true });
  const path = join(VIDEO_CACHE_DIR, name);
  await writeFile(path, bytes);
  return path;
}

/** Every frame's presentation time, seconds from the video's first frame (ffprobe's view). */
export async function probeFrameTimes(path: string): Promise<number[]> {
  const { stdout } = await run(
    "ffprobe",
    [
      "-v",
      "error",
      "-select_streams",
      "v:0",
      "-show_entries",
      "frame=best_effort_timestamp_time",
      "-of",
      "csv=p=0",
      path,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const times = stdout
    .split("\n")
    .map((line) => line.split(",")[0])
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
  return times.map((t) => t - times[0]);
}

export interface FramePattern {
  /** The frame number drawn in the picture, or null when the markers do not read upright. */
  number: number | null;
  upright: boolean;
}

/** Reads the frame number from raw pixels (any channel count; uses the first channel mean). */
export function readPattern(pixels: Uint8Array, width: number, height: number, channels: number) {
  const cell = (index: number) => {
    const x0 = (index % 4) * (width / 4);
    const y0 = Math.floor(index / 4) * (height / 4);
    let sum = 0;
    let count = 0;
    for (let y = Math.floor(y0 + height / 16); y < y0 + (3 * height) / 16; y++) {
      for (let x = Math.floor(x0 + width / 16); x < x0 + (3 * width) / 16; x++) {
        const at = (y * width + x) * channels;
        for (let c = 0; c < Math.min(3, channels); c++) sum += pixels[at + c];
        count += Math.min(3, channels);
      }
    }
    return sum / count;
  };
  const bit = (index: number) => cell(index) > 128;
  const upright = bit(0) && !bit(3) && !bit(12) && !bit(15);
  const number = DATA_CELLS.reduce((n, c, i) => n + (bit(c) ? 2 ** i : 0), 0);
  return { number: upright ? number : null, upright, cellMean: cell } as FramePattern & {
    cellMean: (index: number) => number;
  };
}

/** Decodes an image file (any format sharp reads) and reads its pattern. */
export async function readImagePattern(bytes: Uint8Array) {
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  return { ...readPattern(data, info.width, info.height, info.channels), info };
}

export { MARKER_CELLS };

async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).size > 0;
  } catch {
    return false;
  }
}
