// What one picture costs a model, in input tokens, under each model family's published rule
// (decision 0310). The rules are data: a provider that changes its rule is a change to this
// table (and to its worked examples, which test/edge/image-tokens.test.ts checks), not to code.
// Pure, no Node or Worker APIs: the extractor sizes budgeted frames with it, the edge and the
// MCP tools count what they hand a model with it.

export const IMAGE_TOKEN_MODELS = ["claude", "gpt", "gemini", "generic"] as const;
export type ImageTokenModel = (typeof IMAGE_TOKEN_MODELS)[number];

export interface PictureSize {
  width: number;
  height: number;
}

/**
 * How a family turns a picture into tokens.
 * - `area`: the picture is scaled down (never up) until its long edge is at most
 *   `max_long_edge` and its area at most `max_pixels`; then ceil(width × height /
 *   `pixels_per_token`).
 * - `tiles`: scaled down to fit a `fit_box` square, then down until its short side is at most
 *   `max_short_side`; then `base` + `per_tile` for each `tile`-pixel square that covers it.
 * - `small_or_tiles`: `small_tokens` when both sides are at most `small_side`; else `per_tile`
 *   for each `tile`-pixel square that covers it (no scaling).
 * - `most_of`: the most any of the listed families' rules gives.
 */
export type ImageTokenRule =
  | { kind: "area"; pixels_per_token: number; max_long_edge: number; max_pixels: number }
  | {
      kind: "tiles";
      fit_box: number;
      max_short_side: number;
      tile: number;
      per_tile: number;
      base: number;
    }
  | {
      kind: "small_or_tiles";
      small_side: number;
      small_tokens: number;
      tile: number;
      per_tile: number;
    }
  | { kind: "most_of"; of: readonly Exclude<ImageTokenModel, "generic">[] };

export interface ImageTokenFamily {
  rule: ImageTokenRule;
  /** Where the rule is published, and when we read it (decision 0310 quotes each). */
  source: string;
  checked: string;
  /** Worked examples from the source: the rule must give exactly these. */
  examples: readonly (PictureSize & { tokens: number })[];
}

export const IMAGE_TOKEN_RULES: Record<ImageTokenModel, ImageTokenFamily> = {
  claude: {
    // "tokens = (width px * height px)/750"; an image whose long edge is over 1568 px, or over
    // ~1,600 tokens (1.2 MP), is first scaled down, keeping its aspect ratio.
    rule: { kind: "area", pixels_per_token: 750, max_long_edge: 1568, max_pixels: 1_200_000 },
    source:
      "https://docs.anthropic.com/en/docs/vision (Evaluate image size; Calculate image costs)",
    checked: "2026-11-28",
    examples: [
      { width: 200, height: 200, tokens: 54 },
      { width: 1000, height: 1000, tokens: 1334 },
      { width: 1092, height: 1092, tokens: 1590 },
    ],
  },
  gpt: {
    // detail: "high" (what "auto" picks for frames like ours) on GPT-4o, GPT-4.1, GPT-4.5, o1
    // and o3; the patch-billed minis (gpt-4.1-mini/nano, o4-mini) differ (decision 0310).
    rule: { kind: "tiles", fit_box: 2048, max_short_side: 768, tile: 512, per_tile: 170, base: 85 },
    source: "https://platform.openai.com/docs/guides/images-vision#calculating-costs",
    checked: "2026-11-28",
    examples: [
      { width: 1024, height: 1024, tokens: 765 },
      { width: 2048, height: 4096, tokens: 1105 },
    ],
  },
  gemini: {
    // Gemini 2.x: "both dimensions <= 384 pixels are counted as 258 tokens. Images larger in
    // one or both dimensions are cropped and scaled as needed into tiles of 768x768 pixels,
    // each counted as 258 tokens."
    rule: { kind: "small_or_tiles", small_side: 384, small_tokens: 258, tile: 768, per_tile: 258 },
    source: "https://ai.google.dev/gemini-api/docs/tokens (Multimodal tokens: images)",
    checked: "2026-11-28",
    examples: [
      { width: 384, height: 384, tokens: 258 },
      { width: 600, height: 400, tokens: 258 },
      { width: 1000, height: 1000, tokens: 1032 },
    ],
  },
  generic: {
    // For a model we do not know: the most any known family charges, so a budget that fits
    // this fits every family above.
    rule: { kind: "most_of", of: ["claude", "gpt", "gemini"] },
    source: "Stills (decision 0310): the most of the claude, gpt and gemini rules",
    checked: "2026-11-28",
    examples: [
      { width: 1280, height: 720, tokens: 1229 },
      { width: 384, height: 216, tokens: 258 },
      { width: 1920, height: 1080, tokens: 1599 },
    ],
  },
};

/** The picture the model actually reads: scaled down as its family's rule says, never up. */
export function modelReadSize(model: ImageTokenModel, size: PictureSize): PictureSize {
  const rule = IMAGE_TOKEN_RULES[model].rule;
  if (rule.kind === "area") {
    const long = Math.max(size.width, size.height);
    let scale = Math.min(1, rule.max_long_edge / long);
    const area = size.width * size.height * scale * scale;
    if (area > rule.max_pixels) scale *= Math.sqrt(rule.max_pixels / area);
    return scaled(size, scale);
  }
  if (rule.kind === "tiles") {
    const fit = Math.min(1, rule.fit_box / Math.max(size.width, size.height));
    const boxed = scaled(size, fit);
    const short = Math.min(boxed.width, boxed.height);
    return scaled(boxed, Math.min(1, rule.max_short_side / short));
  }
  if (rule.kind === "most_of") {
    // The smallest of the families' reads: a picture no family shrinks is read whole by all.
    const reads = rule.of.map((family) => modelReadSize(family, size));
    return reads.reduce((a, b) => (a.width * a.height <= b.width * b.height ? a : b));
  }
  return { width: size.width, height: size.height };
}

function scaled(size: PictureSize, scale: number): PictureSize {
  if (scale >= 1) return { width: size.width, height: size.height };
  return {
    // The epsilon keeps 3000 × (1568 / 3000) at 1568, not 1567.
    width: Math.max(1, Math.floor(size.width * scale + 1e-9)),
    height: Math.max(1, Math.floor(size.height * scale + 1e-9)),
  };
}

/** Input tokens one picture of this size costs the model family, by its published rule. */
export function imageTokens(model: ImageTokenModel, size: PictureSize): number {
  if (!(size.width >= 1 && size.height >= 1)) return 0;
  const rule = IMAGE_TOKEN_RULES[model].rule;
  if (rule.kind === "most_of") {
    return Math.max(...rule.of.map((family) => imageTokens(family, size)));
  }
  const read = modelReadSize(model, size);
  if (rule.kind === "area") return Math.ceil((read.width * read.height) / rule.pixels_per_token);
  const tiles = Math.ceil(read.width / rule.tile) * Math.ceil(read.height / rule.tile);
  if (rule.kind === "tiles") return rule.base + rule.per_tile * tiles;
  if (read.width <= rule.small_side && read.height <= rule.small_side) return rule.small_tokens;
  return rule.per_tile * tiles;
}

/** The least one picture can cost the family: what a budget must at least hold. */
export function leastImageTokens(model: ImageTokenModel): number {
  return imageTokens(model, { width: 1, height: 1 });
}
