// ffprobe, wrapped once: raw ffprobe JSON stays in this file; the rest of the extractor sees
// MediaProbe and VideoProbe only.
import type { HdrSource, Rational } from "./args.ts";
import { keyframeProbeArgs, packetScanArgs, probeArgs } from "./args.ts";
import type { MediaProbe, VideoProbe } from "./media-probe.ts";
import { fromMoovOf, type KeyframeRow, keyframesFromIndex } from "./mp4-index.ts";
import { probeFromMoov } from "./mp4-probe.ts";
import { runTool } from "./process.ts";

export type { MediaProbe, SubtitleProbe, VideoProbe } from "./media-probe.ts";

interface FfprobeStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  pix_fmt?: string;
  bits_per_raw_sample?: string;
  width?: number;
  height?: number;
  sample_aspect_ratio?: string;
  r_frame_rate?: string;
  avg_frame_rate?: string;
  time_base?: string;
  start_time?: string;
  duration?: string;
  color_space?: string;
  color_transfer?: string;
  tags?: Record<string, string>;
  disposition?: Record<string, number>;
  side_data_list?: {
    side_data_type?: string;
    rotation?: number;
    max_luminance?: string;
    max_content?: number;
  }[];
}

interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string; start_time?: string; bit_rate?: string };
}

/**
 * What the file holds: an MP4/MOV of the plain shape from its own index (mp4-probe.ts, decision
 * 0286: no ffprobe run), anything else by ffprobe.
 */
export async function probeMedia(input: string, signal?: AbortSignal): Promise<MediaProbe> {
  const indexed = await fromMoovOf(input, signal, (found) =>
    probeFromMoov(found.moov, found.fileSize),
  );
  return indexed ?? probeWithFfprobe(input, signal);
}

/** ffprobe's answer, whatever the container (what probeMedia falls back to). */
export async function probeWithFfprobe(input: string, signal?: AbortSignal): Promise<MediaProbe> {
  const text = await runTool("ffprobe", probeArgs(input), { signal });
  return parseProbe(JSON.parse(text) as FfprobeOutput);
}

export function parseProbe(raw: FfprobeOutput): MediaProbe {
  const streams = raw.streams ?? [];
  const format = raw.format ?? {};
  const videoStream = streams.find(
    (s) => s.codec_type === "video" && !s.disposition?.attached_pic && (s.width ?? 0) > 0,
  );
  return {
    formatName: format.format_name ?? "unknown",
    bytesPerSecond: bytesPerSecondOf(format.bit_rate),
    video: videoStream ? parseVideo(videoStream, format) : null,
    hasAudio: streams.some((s) => s.codec_type === "audio"),
    subtitles: streams
      .filter((s) => s.codec_type === "subtitle")
      .map((s, subtitleIndex) => ({
        streamIndex: s.index,
        subtitleIndex,
        codec: s.codec_name ?? "unknown",
        language: known(s.tags?.language?.trim()) ?? null,
        isDefault: s.disposition?.default === 1,
        isForced: s.disposition?.forced === 1,
      })),
  };
}

function bytesPerSecondOf(bitRate: string | undefined): number | null {
  const bits = Number(bitRate);
  return Number.isFinite(bits) && bits > 0 ? bits / 8 : null;
}

function parseVideo(s: FfprobeStream, format: NonNullable<FfprobeOutput["format"]>): VideoProbe {
  const width = s.width ?? 0;
  const height = s.height ?? 0;
  const rotation = displayRotation(s);
  const sar = parseRational(s.sample_aspect_ratio);
  const pixelAspect = sar && sar.num > 0 && sar.den > 0 ? sar.num / sar.den : 1;
  const shownWidth = Math.round(width * pixelAspect);
  const quarterTurn = rotation === 90 || rotation === 270;
  const avg = rationalValue(s.avg_frame_rate);
  const nominal = rationalValue(s.r_frame_rate);
  const startTime = finite(s.start_time) ?? finite(format.start_time) ?? 0;
  return {
    streamIndex: s.index,
    codec: s.codec_name ?? "unknown",
    pixelFormat: s.pix_fmt ?? "unknown",
    bitDepth: bitDepth(s),
    durationSeconds: videoDuration(s, format, startTime),
    startTime,
    width,
    height,
    displayWidth: quarterTurn ? height : shownWidth,
    displayHeight: quarterTurn ? shownWidth : height,
    rotation,
    frameRate: avg ?? nominal,
    variableFrameRate: avg !== null && nominal !== null && Math.abs(avg - nominal) > nominal * 0.01,
    timeBase: parseRational(s.time_base) ?? { num: 1, den: 90000 },
    colorMatrix: known(s.color_space),
    hdr: hdrSource(s),
  };
}

// MP4 gives the stream's own duration. Matroska gives none, but its muxer's DURATION tag, which
// is the stream's end time, not its length. The container's duration is a last resort: for
// both it can include an initial offset, so it is measured from the container's start.
function videoDuration(
  s: FfprobeStream,
  format: NonNullable<FfprobeOutput["format"]>,
  startTime: number,
): number | null {
  const own = finite(s.duration);
  if (own !== null && own > 0) return own;
  const tag = s.tags?.DURATION ?? s.tags?.duration;
  const end = tag ? parseClock(tag) : null;
  if (end !== null && end > startTime) return end - startTime;
  const total = finite(format.duration);
  if (total === null || total <= 0) return null;
  const formatStart = finite(format.start_time) ?? 0;
  return Math.max(0, total - Math.max(0, startTime - formatStart) - Math.max(0, formatStart));
}

// ffprobe's "rotation" is the display matrix angle, counterclockwise; ffmpeg's autorotate turns
// the picture by its negative, which is what players do and what we apply.
function displayRotation(s: FfprobeStream): VideoProbe["rotation"] {
  const matrix = s.side_data_list?.find((d) => d.side_data_type === "Display Matrix");
  const ccw = matrix?.rotation ?? Number(s.tags?.rotate ? -Number(s.tags.rotate) : 0);
  const clockwise = (((Math.round(-ccw / 90) * 90) % 360) + 360) % 360;
  return clockwise as VideoProbe["rotation"];
}

// HDR10 files usually say their peak; when they do not, 1000 nits is the common mastering
// level (and HLG's nominal display peak).
const DEFAULT_HDR_PEAK_NITS = 1000;

function hdrSource(s: FfprobeStream): HdrSource | null {
  const transfer =
    s.color_transfer === "smpte2084" ? "pq" : s.color_transfer === "arib-std-b67" ? "hlg" : null;
  if (!transfer) return null;
  const sideData = s.side_data_list ?? [];
  const mastering = sideData.find((d) => d.side_data_type === "Mastering display metadata");
  const light = sideData.find((d) => d.side_data_type === "Content light level metadata");
  const masteringPeak = parseRational(mastering?.max_luminance);
  const candidates = [
    light?.max_content,
    masteringPeak ? masteringPeak.num / masteringPeak.den : undefined,
  ].filter((nits): nits is number => typeof nits === "number" && nits > 0);
  return { transfer, peakNits: candidates[0] ?? DEFAULT_HDR_PEAK_NITS };
}

function bitDepth(s: FfprobeStream): number {
  const fromFormat = /p(\d+)(le|be)$/.exec(s.pix_fmt ?? "");
  if (fromFormat) return Number(fromFormat[1]);
  const raw = Number(s.bits_per_raw_sample);
  return Number.isFinite(raw) && raw > 0 ? raw : 8;
}

/**
 * The keyframe at or before each absolute time, null where unknown. One ffprobe run that seeks
 * to each time and reads one packet: cheap even over the relay.
 */
export async function probeKeyframesBefore(
  input: string,
  video: VideoProbe,
  times: number[],
  signal?: AbortSignal,
): Promise<(KeyframeRow | null)[]> {
  const found = await probeKeyframesAt(input, video.streamIndex, times, signal);
  return found.map((row) => (row && row.streamIndex === video.streamIndex ? row : null));
}

/**
 * probeKeyframesBefore for a stream named before the probe has chosen one ("v:0"). An MP4 or
 * MOV answers from its own index (mp4-index.ts: no ffprobe run, no frame read); anything else,
 * or an index of another shape, by ffprobe seeking to each time.
 */
export async function probeKeyframesAt(
  input: string,
  stream: number | "v:0",
  times: number[],
  signal?: AbortSignal,
): Promise<(KeyframeRow | null)[]> {
  if (times.length === 0) return [];
  const indexed = await fromMoovOf(input, signal, ({ moov }) => keyframesFromIndex(moov, times));
  if (indexed && (stream === "v:0" || indexed[0]?.streamIndex === stream)) return indexed;
  const text = await runTool("ffprobe", keyframeProbeArgs(input, stream, times), { signal });
  return parseKeyframeRows(text, times.length);
}

/**
 * ffprobe's rows (`stream_index=0|pts_time=12.0|size=40601|flags=K_`), one per time asked. Any
 * other count (a failed seek, an early end) means rows cannot be paired with times, and the
 * caller then simply does not split there.
 */
export function parseKeyframeRows(text: string, count: number): (KeyframeRow | null)[] {
  const rows = text.trim().split("\n").filter(Boolean);
  if (rows.length !== count) return Array.from({ length: count }, () => null);
  return rows.map((row) => {
    const fields = new Map(
      row.split("|").map((field) => {
        const at = field.indexOf("=");
        return [field.slice(0, at), field.slice(at + 1)] as const;
      }),
    );
    const pts = finite(fields.get("pts_time"));
    const streamIndex = finite(fields.get("stream_index"));
    const bytes = finite(fields.get("size"));
    return pts !== null && streamIndex !== null && fields.get("flags")?.startsWith("K")
      ? { streamIndex, keyframe: pts, bytes: bytes !== null && bytes > 0 ? bytes : null }
      : null;
  });
}

function parseRational(text: string | undefined): Rational | null {
  const match = /^(-?\d+)[/:](\d+)$/.exec(text ?? "");
  if (!match) return null;
  const num = Number(match[1]);
  const den = Number(match[2]);
  return den > 0 ? { num, den } : null;
}

function rationalValue(text: string | undefined): number | null {
  const r = parseRational(text);
  return r && r.num > 0 ? r.num / r.den : null;
}

function finite(text: string | undefined): number | null {
  if (text === undefined || text === "N/A") return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

function parseClock(text: string): number | null {
  const match = /^(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

function known(value: string | undefined): string | null {
  return value && value !== "unknown" ? value : null;
}

/**
 * Length of a video whose container does not say (e.g. WebM from a browser's MediaRecorder):
 * the end of its last packet. Reads every packet header once, without decoding.
 */
export async function scanVideoDuration(
  input: string,
  video: VideoProbe,
  signal?: AbortSignal,
): Promise<number | null> {
  const text = await runTool("ffprobe", packetScanArgs(input, video.streamIndex), { signal });
  let end: number | null = null;
  for (const row of text.split("\n")) {
    const [ptsTime, durationTime] = row.split(",");
    const pts = finite(ptsTime);
    if (pts === null) continue;
    const finish = pts + (finite(durationTime) ?? 0);
    if (end === null || finish > end) end = finish;
  }
  return end === null ? null : Math.max(0, end - video.startTime);
}
