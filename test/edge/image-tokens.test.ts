// The image-token rules of schema/image-tokens.ts against their sources' worked examples
// (decision 0310), and the budget planner of schema/budget.ts (decision 0311): every plan fits
// its budget under the family's rule, measured on the size the frames are delivered at.
import { describe, expect, it } from "vitest";
import { BUDGET_LEGIBLE_LONG_EDGE, budgetFitsAFrame, planBudget } from "../../schema/budget.ts";
import {
  IMAGE_TOKEN_MODELS,
  IMAGE_TOKEN_RULES,
  imageTokens,
  modelReadSize,
} from "../../schema/image-tokens.ts";

describe("image tokens by family", () => {
  for (const model of IMAGE_TOKEN_MODELS) {
    it(`${model}: the rule gives its source's worked examples`, () => {
      const family = IMAGE_TOKEN_RULES[model];
      expect(family.examples.length).toBeGreaterThan(0);
      expect(family.source).not.toBe("");
      for (const example of family.examples) {
        expect(imageTokens(model, example), `${example.width}×${example.height}`).toBe(
          example.tokens,
        );
      }
    });
  }

  it("claude: width × height / 750, after the long edge fits 1568 px and the area 1.2 MP", () => {
    expect(imageTokens("claude", { width: 512, height: 288 })).toBe(Math.ceil((512 * 288) / 750));
    // 3000×1000 is read at 1568×522 (long edge first).
    expect(modelReadSize("claude", { width: 3000, height: 1000 })).toEqual({
      width: 1568,
      height: 522,
    });
    expect(imageTokens("claude", { width: 3000, height: 1000 })).toBe(
      Math.ceil((1568 * 522) / 750),
    );
    // No picture costs more than ~1,600 tokens.
    expect(imageTokens("claude", { width: 8000, height: 8000 })).toBeLessThanOrEqual(1600);
  });

  it("gpt: never scaled up; 85 + 170 per 512-px tile once the short side is at most 768", () => {
    expect(imageTokens("gpt", { width: 128, height: 64 })).toBe(255);
    expect(imageTokens("gpt", { width: 1280, height: 720 })).toBe(85 + 170 * 6);
    // 1920×1080 is read at 1365×768: 3 × 2 tiles.
    expect(modelReadSize("gpt", { width: 1920, height: 1080 })).toEqual({
      width: 1365,
      height: 768,
    });
    expect(imageTokens("gpt", { width: 1920, height: 1080 })).toBe(1105);
  });

  it("gemini: 258 up to 384 px both sides, else 258 per 768-px tile", () => {
    expect(imageTokens("gemini", { width: 385, height: 100 })).toBe(258);
    expect(imageTokens("gemini", { width: 769, height: 432 })).toBe(516);
    expect(imageTokens("gemini", { width: 1920, height: 1080 })).toBe(258 * 6);
  });

  it("generic is the most of the three, for any size", () => {
    for (const size of [
      { width: 64, height: 64 },
      { width: 640, height: 360 },
      { width: 1080, height: 1920 },
      { width: 3840, height: 2160 },
    ]) {
      const most = Math.max(
        imageTokens("claude", size),
        imageTokens("gpt", size),
        imageTokens("gemini", size),
      );
      expect(imageTokens("generic", size)).toBe(most);
    }
  });
});

describe("a budget's plan", () => {
  const landscape = { width: 1280, height: 720 };
  const portrait = { width: 1080, height: 1920 };

  it("fits the budget, measured by the rule on the planned size, for every family", () => {
    for (const model of IMAGE_TOKEN_MODELS) {
      for (const tokens of [300, 1000, 4000, 25_000, 200_000]) {
        for (const display of [landscape, portrait, { width: 640, height: 480 }]) {
          const plan = planBudget({
            budget: { tokens, model },
            display,
            largest: display,
            spanSeconds: 120,
            maxFrames: 300,
          });
          const label = `${model} ${tokens} ${display.width}×${display.height}`;
          expect(plan, label).not.toBeNull();
          if (!plan) continue;
          const perFrame = imageTokens(model, { width: plan.width, height: plan.height });
          expect(plan.per_frame, label).toBe(perFrame);
          expect(plan.tokens_estimated, label).toBe(plan.frames * perFrame);
          expect(plan.tokens_estimated, label).toBeLessThanOrEqual(tokens);
          expect(plan.frames, label).toBeGreaterThanOrEqual(1);
          expect(plan.frames, label).toBeLessThanOrEqual(60); // one per 2 s of 120 s
          // The aspect is the source's.
          expect(
            Math.abs(plan.height - (display.height * plan.width) / display.width),
            label,
          ).toBeLessThanOrEqual(0.5);
        }
      }
    }
  });

  it("claude, 4000 tokens, 30 s of 1280×720: 15 frames, as wide as 15 allow", () => {
    const plan = planBudget({
      budget: { tokens: 4000, model: "claude" },
      display: landscape,
      largest: landscape,
      spanSeconds: 30,
      maxFrames: 300,
    });
    expect(plan).toMatchObject({ frames: 15 });
    if (!plan) return;
    expect(plan.tokens_estimated).toBeLessThanOrEqual(4000);
    // One pixel wider and 15 frames would not fit.
    const wider = imageTokens("claude", {
      width: plan.width + 1,
      height: Math.round((720 * (plan.width + 1)) / 1280),
    });
    expect(15 * wider).toBeGreaterThan(4000);
  });

  it("keeps frames legible: a long video gets fewer frames rather than smaller than 512 px", () => {
    const plan = planBudget({
      budget: { tokens: 4000, model: "claude" },
      display: landscape,
      largest: landscape,
      spanSeconds: 3600,
      maxFrames: 300,
    });
    const legible = imageTokens("claude", { width: BUDGET_LEGIBLE_LONG_EDGE, height: 288 });
    expect(plan?.frames).toBe(Math.floor(4000 / legible));
    expect(plan?.width).toBeGreaterThanOrEqual(BUDGET_LEGIBLE_LONG_EDGE);
    expect(plan?.tokens_estimated).toBeLessThanOrEqual(4000);
  });

  it("never wider than the model reads whole, nor than the job's resolution allows", () => {
    const big = planBudget({
      budget: { tokens: 1_000_000, model: "gpt" },
      display: { width: 3840, height: 2160 },
      largest: { width: 1920, height: 1080 },
      spanSeconds: 4,
      maxFrames: 300,
    });
    // gpt reads a 16:9 picture whole up to a short side of 768.
    expect(big).toMatchObject({ frames: 2, height: 768 });
    const capped = planBudget({
      budget: { tokens: 1_000_000, model: "gemini" },
      display: { width: 3840, height: 2160 },
      largest: { width: 1280, height: 720 },
      spanSeconds: 4,
      maxFrames: 300,
    });
    expect(capped).toMatchObject({ frames: 2, width: 1280, height: 720 });
  });

  it("goes below the legible size only when one legible frame does not fit", () => {
    const plan = planBudget({
      budget: { tokens: 60, model: "claude" },
      display: landscape,
      largest: landscape,
      spanSeconds: 30,
      maxFrames: 300,
    });
    expect(plan?.frames).toBe(1);
    expect(plan?.width).toBeLessThan(BUDGET_LEGIBLE_LONG_EDGE);
    expect(plan?.tokens_estimated).toBeLessThanOrEqual(60);
  });

  it("a budget below one frame's least cost fits nothing", () => {
    expect(budgetFitsAFrame({ tokens: 100, model: "gemini" })).toBe(false);
    expect(budgetFitsAFrame({ tokens: 258, model: "gemini" })).toBe(true);
    expect(budgetFitsAFrame({ tokens: 254, model: "gpt" })).toBe(false);
    expect(budgetFitsAFrame({ tokens: 1, model: "claude" })).toBe(true);
    expect(
      planBudget({
        budget: { tokens: 100, model: "generic" },
        display: landscape,
        largest: landscape,
        spanSeconds: 30,
        maxFrames: 300,
      }),
    ).toBeNull();
  });
});
