// Credit rules (spec §1, DESIGN.md). Pure, so the edge can reserve with the same formula it
// settles with, and tests can check charges against it.
import type { ExtractionMode } from "./messages.ts";
import {
  FRAMES_INCLUDED_PER_MINUTE,
  REPEAT_JOB_CREDITS,
  TIMESTAMP_FRAMES_PER_CREDIT,
} from "./plans.ts";

/**
 * Modes charged per frame, like timestamps: scenes, keyframes, best and slides deliver moments
 * the video chooses, not frames spread over its minutes, so a per-minute price would not fit.
 */
export function chargedPerFrame(mode: ExtractionMode): boolean {
  return (
    mode === "timestamps" ||
    mode === "scenes" ||
    mode === "keyframes" ||
    mode === "best" ||
    mode === "slides"
  );
}

/**
 * live mode (decision 0360) is charged per minute like interval: `processedSeconds` is the
 * stream time it watched (`every` seconds per frame up to the last one caught, at most its
 * duration; the latest frame alone is one started minute), with 100 frames a minute included.
 * A live job holds ceil(duration / 60) credits up front; one that stalls fails, uncharged.
 *
 * Credits for a finished job. `okFrames` counts only frames delivered with status ok (plus
 * STORYBOARD_FRAMES when the job delivered a storyboard);
 * `processedSeconds` is the span of video the job covered (after range and clipping).
 */
export function creditsFor(
  mode: ExtractionMode,
  processedSeconds: number,
  okFrames: number,
): number {
  if (okFrames <= 0) return 0;
  if (chargedPerFrame(mode)) return Math.ceil(okFrames / TIMESTAMP_FRAMES_PER_CREDIT);
  const minutes = Math.max(1, Math.ceil(processedSeconds / 60));
  const extraFrames = Math.max(0, okFrames - FRAMES_INCLUDED_PER_MINUTE * minutes);
  return minutes + Math.ceil(extraFrames / FRAMES_INCLUDED_PER_MINUTE);
}

/**
 * Credits for a job served an earlier job's frames instead of extracting (decision 0350): a
 * repeat of the account's own completed job within retention, with the same source and the
 * same options, whatever its mode and frames.
 */
export function creditsForRepeat(): number {
  return REPEAT_JOB_CREDITS;
}

/** Spend plan credits before pack credits (DESIGN.md). Returns the negative deltas. */
export function splitCharge(
  amount: number,
  balance: { plan: number; pack: number },
): { plan: number; pack: number } {
  const fromPlan = Math.min(amount, Math.max(0, balance.plan));
  return { plan: -fromPlan, pack: -(amount - fromPlan) };
}
