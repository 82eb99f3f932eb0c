// `skip`: each wanted frame that is black, blurred or a repeat of the previous delivered frame
// is replaced by the nearest good picture within its window, without a second decode. The
// decode is simply asked for a few candidate moments around each wanted time (one sparse
// pass reads them together), every candidate is scored from its pixels, and only the chosen
// picture is encoded.
//
// Window: candidates at offsets 0, ±¼, ±½, ±1, ±2 s, kept only strictly within half the
// distance to the neighbouring wanted time (so two frames never compete for one picture),
// inside the job's range, and, in scenes mode, only forward (before a cut is the previous
// shot). Nearest wins; at equal distance, later wins (a fade-in is over sooner than not).
// Blurry: sharpness below BLUR_RATIO of the median sharpness of the non-black candidates
// seen so far in the job (the video's typical detail).

import type { SkipReason } from "../../schema/api.ts";
import type { PlannedFrame } from "../../schema/frame-plan.ts";
import type { PictureScores } from "./picture-scores.ts";
import { DUPLICATE_MAX_BITS, hammingDistance, isBlack, scorePicture } from "./picture-scores.ts";

export const CANDIDATE_OFFSETS = [0, 0.25, -0.25, 0.5, -0.5, 1, -1, 2, -2];
export const BLUR_RATIO = 0.35;

export interface CandidatePlan {
  /** Candidate moments to decode, as planned frames with their own (internal) indexes. */
  candidates: PlannedFrame[];
  /** Candidate index → the wanted time it stands in for and its offset from it. */
  ofCandidate: Map<number, { wantedTime: number; offset: number }>;
}

export function planCandidates(
  wanted: PlannedFrame[],
  range: { start: number; end: number },
  forwardOnly: boolean,
): CandidatePlan {
  const times = [...new Set(wanted.map((f) => f.timestamp))].sort((a, b) => a - b);
  const candidates: PlannedFrame[] = [];
  const ofCandidate = new Map<number, { wantedTime: number; offset: number }>();
  times.forEach((t, i) => {
    const before = i > 0 ? (t - times[i - 1]) / 2 : Number.POSITIVE_INFINITY;
    const after = i + 1 < times.length ? (times[i + 1] - t) / 2 : Number.POSITIVE_INFINITY;
    for (const offset of CANDIDATE_OFFSETS) {
      const time = round6(t + offset);
      const inWindow = offset === 0 || (offset > 0 ? offset < after : -offset < before);
      const allowed = offset >= 0 || !forwardOnly;
      if (!inWindow || !allowed || (offset !== 0 && (time < range.start || time >= range.end))) {
        continue;
      }
      const index = candidates.length + 1;
      candidates.push({ index, timestamp: time, pastEnd: false });
      ofCandidate.set(index, { wantedTime: t, offset });
    }
  });
  return { candidates, ofCandidate };
}

export interface PickedPicture {
  pixels: Buffer;
  pts: number | null;
  /** The frames of the job this picture is delivered for. */
  planned: PlannedFrame[];
  /** The candidate moment taken instead of the wanted time, when moved. */
  movedTo: number | null;
  /** Why the wanted picture was not kept (null when it was good). */
  movedReason: SkipReason | null;
}

interface Scored {
  offset: number;
  time: number;
  pixels: Buffer;
  pts: number | null;
  scores: PictureScores;
}

export class SkipPicker {
  private readonly skip: Set<SkipReason>;
  private readonly plan: CandidatePlan;
  private readonly plannedAt: Map<number, PlannedFrame[]>;
  private readonly width: number;
  private readonly height: number;
  private pendingTime: number | null = null;
  private pending: Scored[] = [];
  private previousHash: bigint | null = null;
  private readonly sharpnessSeen: number[] = [];

  constructor(
    skip: SkipReason[],
    plan: CandidatePlan,
    wanted: PlannedFrame[],
    size: { width: number; height: number },
  ) {
    this.skip = new Set(skip);
    this.plan = plan;
    this.width = size.width;
    this.height = size.height;
    this.plannedAt = new Map();
    for (const frame of wanted) {
      this.plannedAt.set(frame.timestamp, [...(this.plannedAt.get(frame.timestamp) ?? []), frame]);
    }
  }

  /**
   * Takes one decoded candidate (pixels are copied; the caller may release its buffer) and
   * returns the pictures decided by it: a wanted frame is decided once a candidate of a later
   * one arrives, since candidates come in time order and windows do not overlap.
   */
  offer(pixels: Buffer, pts: number | null, candidates: PlannedFrame[]): PickedPicture[] {
    const decided: PickedPicture[] = [];
    let scores: PictureScores | null = null;
    let copy: Buffer | null = null;
    for (const candidate of candidates) {
      const of = this.plan.ofCandidate.get(candidate.index);
      if (!of) continue;
      if (this.pendingTime !== null && this.pendingTime !== of.wantedTime) {
        decided.push(...this.flush());
      }
      this.pendingTime = of.wantedTime;
      scores ??= scorePicture(pixels, this.width, this.height);
      copy ??= Buffer.from(pixels);
      if (!isBlack(scores)) this.sharpnessSeen.push(scores.sharpness);
      this.pending.push({
        offset: of.offset,
        time: candidate.timestamp,
        pixels: copy,
        pts,
        scores,
      });
    }
    return decided;
  }

  /** Decides the wanted frame whose candidates are pending (call once more at the end). */
  flush(): PickedPicture[] {
    const wantedTime = this.pendingTime;
    const pending = this.pending;
    this.pendingTime = null;
    this.pending = [];
    if (wantedTime === null) return [];
    const planned = this.plannedAt.get(wantedTime) ?? [];
    const asked = pending.find((c) => c.offset === 0);
    // The wanted moment itself could not be decoded: its frame stays an error.
    if (!asked) return [];
    const askedFault = this.faultOf(asked);
    let chosen = asked;
    if (askedFault !== null) {
      const preferred = [...pending].sort(
        (a, b) => Math.abs(a.offset) - Math.abs(b.offset) || b.offset - a.offset,
      );
      chosen = preferred.find((c) => this.faultOf(c) === null) ?? asked;
    }
    this.previousHash = chosen.scores.hash;
    return [
      {
        pixels: chosen.pixels,
        pts: chosen.pts,
        planned,
        movedTo: chosen === asked ? null : chosen.time,
        movedReason: askedFault,
      },
    ];
  }

  private faultOf(candidate: Scored): SkipReason | null {
    const { scores } = candidate;
    if (this.skip.has("black") && isBlack(scores)) return "black";
    if (this.skip.has("blurry") && scores.sharpness < BLUR_RATIO * this.typicalSharpness()) {
      return "blurry";
    }
    if (
      this.skip.has("duplicate") &&
      this.previousHash !== null &&
      hammingDistance(this.previousHash, scores.hash) <= DUPLICATE_MAX_BITS
    ) {
      return "duplicate";
    }
    return null;
  }

  private typicalSharpness(): number {
    if (this.sharpnessSeen.length === 0) return 0;
    const sorted = [...this.sharpnessSeen].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
