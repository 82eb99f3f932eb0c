// The cheap pass of `mode: "best"`: one ffmpeg run over the range, every decoded picture scaled
// to the scoring box (best-score.ts) and given ffmpeg's scene score, and one picture every
// `step` seconds kept as a candidate, scored from its pixels as it arrives (nothing is kept but
// the numbers). Each candidate is a frame's own pts, so the sparse engine delivers exactly that
// frame at full size afterwards. Over long spans only keyframes are decoded.
import type { VideoProbe } from "../ffmpeg/probe.ts";
import { failedRun, startTool } from "../ffmpeg/process.ts";
import type { ScoreParts } from "./best-score.ts";
import { scoreQuality, scoreSize } from "./best-score.ts";
import { relativeSeconds, SHOWINFO_FRAME, scanPassArgs } from "./scan-pass.ts";

/** At most about this many candidates, whatever the span. */
export const MOST_CANDIDATES = 400;
/** Candidates are at least this far apart (s). */
export const LEAST_CANDIDATE_STEP = 0.5;
/** Spans longer than this (s) are sampled from their keyframes only (`-skip_frame nokey`). */
export const KEYFRAMES_ONLY_ABOVE_SECONDS = 300;

export interface CandidatePass {
  input: string;
  streamIndex: number;
  /** Absolute stream seconds to start at (range start + the video's start time). */
  seekSeconds: number;
  spanSeconds: number;
  step: number;
  keyframesOnly: boolean;
  width: number;
  height: number;
}

export interface Candidate {
  /** Seconds from the video's first frame: the frame's own pts. */
  time: number;
  score: number;
  parts: ScoreParts;
  /** Shots are numbered from 0 in time order; a scene cut before a candidate starts the next. */
  cutBefore: number;
}

export function candidateStep(spanSeconds: number): number {
  return Math.max(LEAST_CANDIDATE_STEP, spanSeconds / MOST_CANDIDATES);
}

export function planCandidatePass(
  input: string,
  video: VideoProbe,
  range: { start: number; end: number },
): CandidatePass {
  const spanSeconds = Math.max(0, range.end - range.start);
  return {
    input,
    streamIndex: video.streamIndex,
    seekSeconds: range.start + video.startTime,
    spanSeconds,
    step: candidateStep(spanSeconds),
    keyframesOnly: spanSeconds > KEYFRAMES_ONLY_ABOVE_SECONDS,
    ...scoreSize(video.width, video.height),
  };
}

export function candidatePassArgs(pass: CandidatePass): string[] {
  return scanPassArgs(pass, {
    keyframesOnly: pass.keyframesOnly,
    filters: [
      `scale=${pass.width}:${pass.height}:flags=area`,
      "select='gte(scene\\,0)'",
      "metadata=print:key=lavfi.scene_score",
      `select='isnan(prev_selected_t)+gte(t-prev_selected_t\\,${pass.step.toFixed(6)})'`,
      "showinfo=checksum=0",
      "format=rgb24",
    ],
    pixelFormat: "rgb24",
  });
}

const METADATA_FRAME = /^\[Parsed_metadata_\d+ @ [^\]]+\] \[info\] frame:\s*\d+\s+pts:\s*(-?\d+)\s/;
const METADATA_SCORE =
  /^\[Parsed_metadata_\d+ @ [^\]]+\] \[info\] lavfi\.scene_score=([0-9.eE+-]+)/;
const FILTER_LINE = /^\[Parsed_(?:metadata|showinfo)_\d+ @/;

/** Reads the pass's stderr: every decoded picture's scene score, and each candidate's pts. */
export class CandidateLog {
  readonly sceneScores: { ticks: number; score: number }[] = [];
  readonly candidateTicks: number[] = [];
  private ticks: number | null = null;

  /** Returns true for the lines it took (kept out of the error tail). */
  read(line: string): boolean {
    const frame = METADATA_FRAME.exec(line);
    if (frame) {
      this.ticks = Number(frame[1]);
      return true;
    }
    const score = METADATA_SCORE.exec(line);
    if (score) {
      const value = Number(score[1]);
      if (this.ticks !== null) {
        this.sceneScores.push({ ticks: this.ticks, score: Number.isFinite(value) ? value : 0 });
      }
      this.ticks = null;
      return true;
    }
    const shown = SHOWINFO_FRAME.exec(line);
    if (shown) {
      this.candidateTicks.push(Number(shown[1]));
      return true;
    }
    return FILTER_LINE.test(line);
  }
}

/**
 * The strongest scene score between each candidate and the one before it (after the previous
 * candidate, up to and including this one); the first candidate's is 0.
 */
export function cutsBefore(
  candidateTicks: number[],
  sceneScores: { ticks: number; score: number }[],
): number[] {
  return candidateTicks.map((ticks, k) => {
    if (k === 0) return 0;
    const after = candidateTicks[k - 1];
    let most = 0;
    for (const s of sceneScores) {
      if (s.ticks > after && s.ticks <= ticks) most = Math.max(most, s.score);
    }
    return most;
  });
}

/** Runs the pass and scores every candidate. */
export async function scanCandidates(
  pass: CandidatePass,
  video: Pick<VideoProbe, "timeBase" | "startTime">,
  signal?: AbortSignal,
): Promise<Candidate[]> {
  if (!(pass.spanSeconds > 0)) return [];
  const reader = new CandidateLog();
  const running = startTool("ffmpeg", candidatePassArgs(pass), {
    signal,
    onStderrLine: (line) => reader.read(line),
  });
  const frameBytes = pass.width * pass.height * 3;
  const scored: { score: number; parts: ScoreParts }[] = [];
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of running.stdout as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= frameBytes) {
      scored.push(scoreQuality(pending.subarray(0, frameBytes), pass.width, pass.height));
      pending = pending.subarray(frameBytes);
    }
  }
  const exit = await running.exited;
  if (exit.code !== 0) throw failedRun("ffmpeg", running, exit, signal);
  const ticks = reader.candidateTicks.slice(0, scored.length);
  const cuts = cutsBefore(ticks, reader.sceneScores);
  return ticks
    .map((t, k) => ({
      time: relativeSeconds(t, video.timeBase, video.startTime),
      score: scored[k].score,
      parts: scored[k].parts,
      cutBefore: cuts[k],
    }))
    .filter((c) => c.time >= 0);
}
