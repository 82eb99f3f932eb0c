// A job's token budget, once the probe knows the picture (decision 0311): the count and the
// width schema/budget.ts picks become the job's own count and max_width, so every mode plans,
// decodes and sizes as if the caller had asked for them; the report is measured afterwards on
// the size the frames were actually delivered at.
import { planBudget } from "../schema/budget.ts";
import { imageTokens } from "../schema/image-tokens.ts";
import type { FrameResult, JobOptions, ResultBudget } from "../schema/messages.ts";
import { ExtractError } from "./errors.ts";
import { type OutputSize, planOutputSize } from "./sizing.ts";

/** The options with the budget's count and width in, or the options as they were. */
export function budgetedOptions(
  options: JobOptions,
  display: { width: number; height: number },
  usableSeconds: number,
  maxFrames: number,
): JobOptions {
  if (!options.budget) return options;
  const largest = planOutputSize(display, options.resolution);
  const start = Math.min(options.start ?? 0, usableSeconds);
  const end = Math.min(options.end ?? usableSeconds, usableSeconds);
  const plan = planBudget({
    budget: options.budget,
    display,
    largest,
    spanSeconds: Math.max(0, end - start),
    maxFrames,
  });
  if (!plan) {
    // The edge refuses budgets below one frame's least cost, so only a picture far narrower
    // than any video's gets here.
    throw new ExtractError(
      "ExtractionFailed",
      `no frame of this ${display.width}×${display.height} video fits ${options.budget.tokens} tokens for ${options.budget.model}`,
      "Not even one frame of this video fits the token budget. Raise budget.tokens.",
    );
  }
  return { ...options, count: plan.frames, max_width: plan.width };
}

/** job.budget: the delivered frames and their size, counted by the family's rule. */
export function measuredBudget(
  options: JobOptions,
  size: Pick<OutputSize, "width" | "height">,
  frames: Pick<FrameResult, "status">[],
): ResultBudget | null {
  if (!options.budget) return null;
  const perFrame = imageTokens(options.budget.model, size);
  const delivered = frames.filter((frame) => frame.status === "ok").length;
  return {
    tokens_estimated: perFrame * delivered,
    per_frame: perFrame,
    frames: delivered,
    width: size.width,
    height: size.height,
  };
}
