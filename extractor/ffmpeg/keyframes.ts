// The two whole-video looks the quality modes need, built and parsed here so no raw tool output
// leaks further: the stream's keyframe list (an MP4's own index, else ffprobe decoding keyframes
// only, each row checked to be one) and every frame's scene score from one low-resolution pass
// (ffmpeg's `scene`).
// Times are computed from integer pts × time base, as decode.ts names pts, so a time handed
// back to the sparse engine selects exactly that frame.
import type { Rational } from "./args.ts";
import { safeInputArgs } from "./args.ts";
import { fromMoovOf, keyframeTicksFromIndex } from "./mp4-index.ts";
import type { VideoProbe } from "./probe.ts";
import { runTool } from "./process.ts";

/** Width of the scene pass's pictures: enough to see a cut, ~1/100 of the pixels of 1080p. */
export const SCENE_PASS_WIDTH = 160;

/**
 * `-skip_frame nokey` spares decoding the frames between keyframes where the decoder honours
 * it (H.264, HEVC, VP8); ffmpeg 5.1's VP9 and AV1 decoders ignore it and return every frame,
 * so each row also says whether it is a keyframe (csv columns: key_frame, pts, pkt_dts).
 */
export function keyframeListArgs(input: string, streamIndex: number): string[] {
  return [
    "-v",
    "error",
    "-skip_frame",
    "nokey",
    "-select_streams",
    String(streamIndex),
    "-show_entries",
    "frame=key_frame,pts,pkt_dts",
    "-print_format",
    "csv=p=0",
    ...safeInputArgs(input),
  ];
}

export function scenePassArgs(input: string, streamIndex: number): string[] {
  return [
    "-v",
    "error",
    "-nostdin",
    ...safeInputArgs(input),
    "-map",
    `0:${streamIndex}`,
    "-an",
    "-sn",
    "-dn",
    "-vf",
    `scale=${SCENE_PASS_WIDTH}:-2:flags=fast_bilinear,select='gte(scene,0)',metadata=print:file=-`,
    "-f",
    "null",
    "-",
  ];
}

/**
 * Keyframe times, seconds from the video's first frame, ascending and unique. An MP4 or MOV
 * answers from its own index (mp4-index.ts: the moov alone, no frame decoded, nothing else
 * read); anything else, or an index of another shape or clock, by ffprobe decoding every
 * keyframe of the file, which reads the whole file.
 */
export async function listKeyframes(
  input: string,
  video: VideoProbe,
  signal?: AbortSignal,
): Promise<number[]> {
  const indexed = await fromMoovOf(input, signal, ({ moov }) => keyframeTicksFromIndex(moov));
  if (
    indexed &&
    indexed.streamIndex === video.streamIndex &&
    video.timeBase.num === 1 &&
    video.timeBase.den === indexed.timescale
  ) {
    return relativeTimes(indexed.ticks, video.timeBase, video.startTime);
  }
  const text = await runTool("ffprobe", keyframeListArgs(input, video.streamIndex), { signal });
  return parseKeyframeList(text, video.timeBase, video.startTime);
}

export function parseKeyframeList(text: string, timeBase: Rational, startTime: number): number[] {
  const ticks: number[] = [];
  for (const row of text.split("\n")) {
    const [keyFrame, pts, dts] = row.split(",");
    if (keyFrame?.trim() !== "1") continue;
    const tick = integer(pts) ?? integer(dts);
    if (tick !== null) ticks.push(tick);
  }
  return relativeTimes(ticks, timeBase, startTime);
}

/** Times on screen (a frame before the first shown one is not), ascending and unique. */
function relativeTimes(ticks: number[], timeBase: Rational, startTime: number): number[] {
  const times = new Set<number>();
  for (const tick of ticks) {
    const t = toRelativeSeconds(tick, timeBase, startTime);
    if (t >= 0) times.add(t);
  }
  return [...times].sort((a, b) => a - b);
}

export interface SceneSample {
  /** Seconds from the video's first frame (microseconds, from integer pts). */
  time: number;
  /** ffmpeg's scene score against the previous frame, 0…1 (0 for the first frame). */
  score: number;
}

/** Every frame's scene score, in presentation order; one decode at SCENE_PASS_WIDTH. */
export async function scanSceneScores(
  input: string,
  video: VideoProbe,
  signal?: AbortSignal,
): Promise<SceneSample[]> {
  const text = await runTool("ffmpeg", scenePassArgs(input, video.streamIndex), {
    signal,
    maxOutputBytes: 512 * 1024 * 1024,
  });
  return parseSceneScores(text, video.timeBase, video.startTime);
}

const METADATA_FRAME = /^frame:\s*\d+\s+pts:\s*(-?\d+)\s/;
const SCENE_SCORE = /^lavfi\.scene_score=([0-9.eE+-]+)\s*$/;

export function parseSceneScores(
  text: string,
  timeBase: Rational,
  startTime: number,
): SceneSample[] {
  const samples: SceneSample[] = [];
  let ticks: number | null = null;
  for (const line of text.split("\n")) {
    const frame = METADATA_FRAME.exec(line);
    if (frame) {
      ticks = Number(frame[1]);
      continue;
    }
    const score = SCENE_SCORE.exec(line);
    if (score && ticks !== null) {
      const value = Number(score[1]);
      samples.push({
        time: toRelativeSeconds(ticks, timeBase, startTime),
        score: Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0,
      });
      ticks = null;
    }
  }
  // Frames before the first shown one (edit lists) are never on screen.
  return samples.filter((s) => s.time >= 0).sort((a, b) => a.time - b.time);
}

function toRelativeSeconds(ticks: number, timeBase: Rational, startTime: number): number {
  // The same product decode.ts uses for showinfo's pts, so both name a frame alike.
  const absolute = ticks * (timeBase.num / timeBase.den);
  return Math.round((absolute - startTime) * 1e6) / 1e6;
}

function integer(text: string | undefined): number | null {
  if (!text || !/^-?\d+$/.test(text.trim())) return null;
  return Number(text.trim());
}
