// What `skip` judges a decoded picture by, computed from its RGB pixels in one sweep. Pure.
//
// - black: at least 98 % of the picture at luma ≤ 32 (of 255), as ffmpeg's blackdetect
//   counts (pic_th 0.98), or nearly uniform (luma standard deviation below 4): a fade's
//   bottom, a title card of one colour, a dropped signal.
// - sharpness: variance of the 4-neighbour Laplacian of luma. Blur is judged against the
//   video's own typical value (skip-picker.ts), since detail differs from video to video.
// - hash: 64-bit dHash (9×8 block means of luma, one bit per horizontal neighbour pair).
//   Two pictures whose hashes differ in at most DUPLICATE_MAX_BITS bits are duplicates.

/** Luma at or below this counts as dark. */
export const DARK_LUMA = 32;
/** Share of dark samples that makes a picture black. */
export const BLACK_SHARE = 0.98;
/** Luma standard deviation below which a picture is one flat colour. */
export const UNIFORM_SPREAD = 4;
/** Hamming distance of two dHashes at or under which the pictures are the same. */
export const DUPLICATE_MAX_BITS = 4;

// About 200k samples whatever the size: a 4K picture is read at every 4th pixel and row,
// each sample's Laplacian from its full-resolution neighbours, so blur is still seen.
const TARGET_SAMPLES = 200_000;

export interface PictureScores {
  /** Share of samples at luma ≤ DARK_LUMA. */
  darkShare: number;
  meanLuma: number;
  lumaSpread: number;
  sharpness: number;
  hash: bigint;
}

export function scorePicture(pixels: Uint8Array, width: number, height: number): PictureScores {
  const step = Math.max(1, Math.round(Math.sqrt((width * height) / TARGET_SAMPLES)));
  const luma = (x: number, y: number) => {
    const i = (y * width + x) * 3;
    return (77 * pixels[i] + 150 * pixels[i + 1] + 29 * pixels[i + 2]) >> 8;
  };
  const blocks = new Float64Array(72);
  const blockCounts = new Float64Array(72);
  let samples = 0;
  let dark = 0;
  let sum = 0;
  let sumSquares = 0;
  let lapSum = 0;
  let lapSquares = 0;
  let lapCount = 0;
  for (let y = 0; y < height; y += step) {
    const row = Math.min(7, Math.floor((y * 8) / height));
    for (let x = 0; x < width; x += step) {
      const v = luma(x, y);
      samples++;
      if (v <= DARK_LUMA) dark++;
      sum += v;
      sumSquares += v * v;
      const block = row * 9 + Math.min(8, Math.floor((x * 9) / width));
      blocks[block] += v;
      blockCounts[block]++;
      if (x > 0 && y > 0 && x < width - 1 && y < height - 1) {
        const lap = luma(x - 1, y) + luma(x + 1, y) + luma(x, y - 1) + luma(x, y + 1) - 4 * v;
        lapSum += lap;
        lapSquares += lap * lap;
        lapCount++;
      }
    }
  }
  const mean = sum / samples;
  const lapMean = lapCount > 0 ? lapSum / lapCount : 0;
  return {
    darkShare: dark / samples,
    meanLuma: mean,
    lumaSpread: Math.sqrt(Math.max(0, sumSquares / samples - mean * mean)),
    sharpness: lapCount > 0 ? lapSquares / lapCount - lapMean * lapMean : 0,
    hash: differenceHash(blocks, blockCounts),
  };
}

function differenceHash(blocks: Float64Array, counts: Float64Array): bigint {
  let hash = 0n;
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 8; col++) {
      const i = row * 9 + col;
      const left = counts[i] > 0 ? blocks[i] / counts[i] : 0;
      const right = counts[i + 1] > 0 ? blocks[i + 1] / counts[i + 1] : 0;
      hash = (hash << 1n) | (left < right ? 1n : 0n);
    }
  }
  return hash;
}

export function isBlack(scores: PictureScores): boolean {
  return scores.darkShare >= BLACK_SHARE || scores.lumaSpread < UNIFORM_SPREAD;
}

export function hammingDistance(a: bigint, b: bigint): number {
  let x = a ^ b;
  let bits = 0;
  while (x > 0n) {
    bits += Number(x & 1n);
    x >>= 1n;
  }
  return bits;
}
