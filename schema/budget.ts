// A token budget (`budget: {tokens, model}`, decision 0311): how many frames, and how wide, fit
// N tokens under the model family's image rule (schema/image-tokens.ts). Pure: the extractor
// calls it once the probe knows the picture's aspect and the span, the edge checks requests
// against its bounds.
import {
  type ImageTokenModel,
  imageTokens,
  leastImageTokens,
  modelReadSize,
  type PictureSize,
} from "./image-tokens.ts";

/** The most tokens a budget may name: far above any model's context window. */
export const MAX_BUDGET_TOKENS = 10_000_000;
/** A budget spreads frames no closer than this (seconds of the span per frame). */
export const BUDGET_SECONDS_PER_FRAME = 2;
/**
 * Below this long edge (pixels) a frame's text stops being legible: a budget buys more frames
 * only down to it, and goes below it only when one frame of that size does not fit.
 */
export const BUDGET_LEGIBLE_LONG_EDGE = 512;
/** The narrowest frame a budget makes. */
const NARROWEST = 8;

export interface BudgetRequest {
  tokens: number;
  model: ImageTokenModel;
}

/** What a budget chose: its frames, their size, and the estimate under the family's rule. */
export interface BudgetPlan {
  frames: number;
  width: number;
  height: number;
  per_frame: number;
  tokens_estimated: number;
}

/** Whether one frame of some size can fit this budget at all (the edge refuses it if not). */
export function budgetFitsAFrame(budget: BudgetRequest): boolean {
  return budget.tokens >= leastImageTokens(budget.model);
}

/**
 * The frames and width that fit the budget. `display` is the source as displayed, `largest` the
 * size its frames would have without the budget (the job's resolution, never upscaled); a
 * frame `w` wide is `round(display.height × w / display.width)` high, as the extractor sizes
 * it with max_width = w. Coverage first: as many frames as fit at a legible size, up to one per
 * BUDGET_SECONDS_PER_FRAME of the span and `maxFrames`; then the widest frames that keep that
 * count, never wider than the model reads without shrinking. Null when not even one frame fits.
 */
export function planBudget(input: {
  budget: BudgetRequest;
  display: PictureSize;
  largest: PictureSize;
  spanSeconds: number;
  maxFrames: number;
}): BudgetPlan | null {
  const { budget, display, largest } = input;
  const sizeAt = (width: number): PictureSize =>
    width >= largest.width
      ? largest
      : { width, height: Math.max(1, Math.round(display.height * (width / display.width))) };
  const cost = (width: number) => imageTokens(budget.model, sizeAt(width));
  const wanted = Math.max(
    1,
    Math.min(input.maxFrames, Math.ceil(input.spanSeconds / BUDGET_SECONDS_PER_FRAME)),
  );
  const framesAt = (width: number) => Math.min(wanted, Math.floor(budget.tokens / cost(width)));

  // Wider than the model reads whole buys nothing: it would shrink the picture itself.
  let widest = Math.max(NARROWEST, largest.width);
  while (widest > NARROWEST && !readWhole(budget.model, sizeAt(widest))) widest--;
  const legible =
    display.width >= display.height
      ? BUDGET_LEGIBLE_LONG_EDGE
      : Math.round((BUDGET_LEGIBLE_LONG_EDGE * display.width) / display.height);
  const floor = Math.min(widest, Math.max(NARROWEST, legible));

  const atFloor = framesAt(floor);
  // The widest frame that keeps the count the legible size affords (or, when not even one
  // legible frame fits, the widest single frame that does).
  const keep = Math.max(1, atFloor);
  const from = atFloor >= 1 ? widest : floor - 1;
  const to = atFloor >= 1 ? floor : NARROWEST;
  for (let width = from; width >= to; width--) {
    const frames = framesAt(width);
    if (frames >= keep) {
      const size = sizeAt(width);
      const perFrame = cost(width);
      return {
        frames,
        width: size.width,
        height: size.height,
        per_frame: perFrame,
        tokens_estimated: frames * perFrame,
      };
    }
  }
  return null;
}

function readWhole(model: ImageTokenModel, size: PictureSize): boolean {
  const read = modelReadSize(model, size);
  return read.width === size.width && read.height === size.height;
}
