// The frames of scenes and keyframes jobs, which the video itself decides: one low-resolution
// scene pass, or the keyframe list, then the moments in the job's range, capped at count (or
// the plan's limit, as the edge's mostFramesFor expects). Each moment is a frame's own pts, so
// the sparse engine delivers exactly that frame.
import type { FramePlan } from "../../schema/frame-plan.ts";
import { roundTime } from "../../schema/frame-plan.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { listKeyframes, scanSceneScores } from "../ffmpeg/keyframes.ts";
import type { VideoProbe } from "../ffmpeg/probe.ts";
import { pickSceneCuts, spreadEvenly } from "./scenes.ts";

export interface FoundMoments extends FramePlan {
  /** Frame index → its scene score (scenes mode). */
  sceneScores: Map<number, number>;
}

export function isFoundMode(mode: JobOptions["mode"]): mode is "scenes" | "keyframes" {
  return mode === "scenes" || mode === "keyframes";
}

export async function findMoments(
  input: string,
  video: VideoProbe,
  options: JobOptions,
  usableSeconds: number,
  maxFrames: number,
  signal: AbortSignal,
): Promise<FoundMoments> {
  const rangeEnd = Math.min(options.end ?? usableSeconds, usableSeconds);
  const rangeStart = Math.min(options.start ?? 0, rangeEnd);
  const processedSeconds = roundTime(Math.max(0, rangeEnd - rangeStart));
  const most = Math.min(options.count ?? maxFrames, maxFrames);
  const sceneScores = new Map<number, number>();
  let times: number[];
  if (options.mode === "scenes") {
    const samples = await scanSceneScores(input, video, signal);
    const cuts = pickSceneCuts(samples, {
      sensitivity: options.sensitivity,
      count: most,
      rangeStart,
      rangeEnd,
    });
    times = cuts.map((c) => c.time);
    cuts.forEach((c, i) => {
      sceneScores.set(i + 1, Math.round(c.score * 1e6) / 1e6);
    });
  } else {
    const keyframes = await listKeyframes(input, video, signal);
    times = spreadEvenly(
      keyframes.filter((t) => t >= rangeStart && t < rangeEnd),
      most,
    );
  }
  return {
    frames: times.map((timestamp, i) => ({ index: i + 1, timestamp, pastEnd: false })),
    rangeStart,
    rangeEnd,
    processedSeconds,
    sceneScores,
  };
}
