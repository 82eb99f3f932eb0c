// How good a picture looks, for `mode: "best"`: five parts, each 0…1, from the RGB pixels of a
// candidate decoded at SCORE_BOX (a fixed size, so the Laplacian means the same on every
// video), and one score, their weighted mean. Pure, so the rule is tested as data; the weights
// and the points where each part saturates are data too (BEST_WEIGHTS, PART_SCALES), and
// docs/guides/best-frames.md explains them.
//
// - sharpness: variance of the 4-neighbour Laplacian of luma, v / (v + SHARPNESS_HALF);
// - exposure: 1 − the share of clipped samples (luma ≤ 8 or ≥ 247) over CLIPPED_LIMIT, times
//   1 − ((mean − 128) / 128)²: a picture whose light sits at either end is badly exposed;
// - contrast: RMS contrast, the luma standard deviation over CONTRAST_FULL;
// - colourfulness: Hasler and Süsstrunk's metric (2003) over COLOURFUL_FULL;
// - interest: Shannon entropy of the 64-bin luma histogram over its 6-bit most.
// Faces are not a part: see docs/decisions/0220-best-frame-scores.md.

import type { ScoreParts } from "../../schema/api.ts";
import { BEST_SCORE_PARTS as SCORE_PARTS } from "../../schema/api.ts";

export type { ScoreParts };

/** The box candidates are scored at: the picture fits in it, its aspect kept. */
export const SCORE_BOX = 256;

/** Each part's weight in the score; they sum to 1. Changing the ranking is changing this. */
export const BEST_WEIGHTS: Readonly<ScoreParts> = {
  sharpness: 0.3,
  exposure: 0.2,
  contrast: 0.15,
  colourfulness: 0.2,
  interest: 0.15,
};

/** Where each part reaches ½ (sharpness) or 1 (the rest). */
export const PART_SCALES = {
  /** Laplacian variance (luma 0…255) at which sharpness is ½. */
  SHARPNESS_HALF: 150,
  /** Share of clipped samples at which exposure reaches 0. */
  CLIPPED_LIMIT: 0.5,
  /** Luma standard deviation at which contrast is 1 (a full-range picture is about 70). */
  CONTRAST_FULL: 64,
  /** Hasler–Süsstrunk M at which colourfulness is 1 ("highly colourful" is 82). */
  COLOURFUL_FULL: 90,
} as const;

const CLIPPED_LOW = 8;
const CLIPPED_HIGH = 247;
const HISTOGRAM_BINS = 64;

export interface PictureQuality {
  score: number;
  parts: ScoreParts;
}

/** The scoring size of a picture stored at width×height: fits SCORE_BOX, even sides. */
export function scoreSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(1, SCORE_BOX / Math.max(width, height, 1));
  const even = (x: number) => Math.max(2, 2 * Math.round((x * scale) / 2));
  return { width: even(width), height: even(height) };
}

export function scoreQuality(pixels: Uint8Array, width: number, height: number): PictureQuality {
  const count = width * height;
  const luma = new Float64Array(count);
  const histogram = new Float64Array(HISTOGRAM_BINS);
  let sum = 0;
  let sumSquares = 0;
  let clipped = 0;
  // Hasler–Süsstrunk opponent channels: rg = R − G, yb = ½(R + G) − B.
  let rgSum = 0;
  let rgSquares = 0;
  let ybSum = 0;
  let ybSquares = 0;
  for (let i = 0; i < count; i++) {
    const r = pixels[3 * i];
    const g = pixels[3 * i + 1];
    const b = pixels[3 * i + 2];
    const y = 0.299 * r + 0.587 * g + 0.114 * b;
    luma[i] = y;
    sum += y;
    sumSquares += y * y;
    if (y <= CLIPPED_LOW || y >= CLIPPED_HIGH) clipped++;
    histogram[Math.min(HISTOGRAM_BINS - 1, Math.floor((y * HISTOGRAM_BINS) / 256))]++;
    const rg = r - g;
    const yb = 0.5 * (r + g) - b;
    rgSum += rg;
    rgSquares += rg * rg;
    ybSum += yb;
    ybSquares += yb * yb;
  }
  const mean = sum / count;
  const spread = Math.sqrt(Math.max(0, sumSquares / count - mean * mean));
  const rgMean = rgSum / count;
  const ybMean = ybSum / count;
  const rgSpread = Math.sqrt(Math.max(0, rgSquares / count - rgMean * rgMean));
  const ybSpread = Math.sqrt(Math.max(0, ybSquares / count - ybMean * ybMean));
  const colourfulness = Math.hypot(rgSpread, ybSpread) + 0.3 * Math.hypot(rgMean, ybMean);

  let entropy = 0;
  for (const n of histogram) {
    if (n > 0) entropy -= (n / count) * Math.log2(n / count);
  }
  const laplacian = laplacianVariance(luma, width, height);
  const offCentre = (mean - 128) / 128;
  const parts: ScoreParts = {
    sharpness: laplacian / (laplacian + PART_SCALES.SHARPNESS_HALF),
    exposure:
      Math.max(0, 1 - clipped / count / PART_SCALES.CLIPPED_LIMIT) * (1 - offCentre * offCentre),
    contrast: Math.min(1, spread / PART_SCALES.CONTRAST_FULL),
    colourfulness: Math.min(1, colourfulness / PART_SCALES.COLOURFUL_FULL),
    interest: Math.min(1, entropy / Math.log2(HISTOGRAM_BINS)),
  };
  return { score: weightedScore(parts), parts: roundParts(parts) };
}

/** The weighted mean of the parts, 0…1, to 4 decimals. */
export function weightedScore(parts: ScoreParts): number {
  let score = 0;
  for (const part of SCORE_PARTS) score += BEST_WEIGHTS[part] * clamp01(parts[part]);
  return round4(score);
}

function laplacianVariance(luma: Float64Array, width: number, height: number): number {
  let n = 0;
  let sum = 0;
  let squares = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const lap = luma[i - 1] + luma[i + 1] + luma[i - width] + luma[i + width] - 4 * luma[i];
      sum += lap;
      squares += lap * lap;
      n++;
    }
  }
  if (n === 0) return 0;
  const mean = sum / n;
  return Math.max(0, squares / n - mean * mean);
}

function roundParts(parts: ScoreParts): ScoreParts {
  const out = {} as ScoreParts;
  for (const part of SCORE_PARTS) out[part] = round4(clamp01(parts[part]));
  return out;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
