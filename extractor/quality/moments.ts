// The frames of scenes, keyframes, best and slides jobs, which the video itself decides: one
// low-resolution scene pass, the keyframe list, the scored candidates of best's cheap pass, or
// the settled stretches of slides' grey pass, then the moments in the job's range, capped at count (or the plan's limit, as the edge's
// mostFramesFor expects). Each moment is a frame's own pts, so the sparse engine delivers
// exactly that frame. Best's frames come best first; the others in time order.
import type { FramePlan } from "../../schema/frame-plan.ts";
import { roundTime } from "../../schema/frame-plan.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { listKeyframes, scanSceneScores } from "../ffmpeg/keyframes.ts";
import type { VideoProbe } from "../ffmpeg/probe.ts";
import { planCandidatePass, scanCandidates } from "./best-candidates.ts";
import { bestMomentOf, minGapSeconds, pickWinners } from "./best-picker.ts";
import type { ScoreParts } from "./best-score.ts";
import { pickSceneCuts, spreadEvenly } from "./scenes.ts";
import type { SlideShowing } from "./slides.ts";
import { findSlides } from "./slides.ts";
import { planSlidesPass, scanSlideSamples } from "./slides-scan.ts";

export interface FoundMoments extends FramePlan {
  /** Frame index → its scene score (scenes mode). */
  sceneScores: Map<number, number>;
  /** Frame index → its score and the score's parts (best mode). */
  bestScores: Map<number, { score: number; parts: ScoreParts }>;
  /** best mode: the best candidate and its shot's start (where a preview begins). */
  bestMoment?: { time: number; shotStart: number } | null;
  /** slides mode: showing i is frame i + 1 (slides.ts). */
  slides?: SlideShowing[];
}

export function isFoundMode(
  mode: JobOptions["mode"],
): mode is "scenes" | "keyframes" | "best" | "slides" {
  return mode === "scenes" || mode === "keyframes" || mode === "best" || mode === "slides";
}

/** The best moment of a range, for a preview without a start in a mode that is not best. */
export async function findBestMoment(
  input: string,
  video: VideoProbe,
  range: { start: number; end: number },
  signal: AbortSignal,
): Promise<{ time: number; shotStart: number } | null> {
  const pass = planCandidatePass(input, video, range);
  return bestMomentOf(await scanCandidates(pass, video, signal));
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
  const bestScores: FoundMoments["bestScores"] = new Map();
  let times: number[];
  let bestMoment: FoundMoments["bestMoment"];
  let slides: SlideShowing[] | undefined;
  if (options.mode === "slides") {
    const pass = planSlidesPass(input, video, { start: rangeStart, end: rangeEnd });
    const samples = await scanSlideSamples(pass, video, signal);
    slides = findSlides(samples, { grid: pass.grid, step: pass.step, rangeEnd, count: most });
    times = slides.map((s) => s.time);
  } else if (options.mode === "best") {
    const pass = planCandidatePass(input, video, { start: rangeStart, end: rangeEnd });
    const candidates = await scanCandidates(pass, video, signal);
    const count = Math.min(options.count ?? 1, maxFrames);
    const winners = pickWinners(
      candidates,
      count,
      minGapSeconds(pass.spanSeconds, count, pass.step),
    );
    times = winners.map((w) => w.time);
    bestMoment = bestMomentOf(candidates);
    winners.forEach((w, i) => {
      bestScores.set(i + 1, { score: w.score, parts: w.parts });
    });
  } else if (options.mode === "scenes") {
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
    bestScores,
    bestMoment,
    slides,
  };
}
