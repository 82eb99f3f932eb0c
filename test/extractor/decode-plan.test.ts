// How decodeAll deals a sparse job's seeks out to the batches that run side by side
// (extractor/decode-plan.ts dealtSideBySide): the batches' decoding about equal, each batch's
// groups in time order, the batches' limits kept, and the plans it leaves alone.
import { describe, expect, it } from "vitest";
import type { BatchGroup, DecodeGroup } from "../../extractor/decode.ts";
import { dealtSideBySide, packBatches } from "../../extractor/decode-plan.ts";

/** A group of one time, seeking to the keyframe on the 2 s grid before it. */
function group(time: number): BatchGroup {
  const keyframeSeconds = Math.floor(time / 2) * 2;
  return { seekSeconds: keyframeSeconds, keyframeSeconds, times: [time] };
}

const batchable = (g: DecodeGroup): g is BatchGroup => "keyframeSeconds" in g;
/** Decoding a batch does: from each keyframe to its last time (the cost model's, less opening). */
const decoding = (batch: DecodeGroup[]) =>
  batch.reduce(
    (sum, g) => sum + (g.times[g.times.length - 1] - (g as BatchGroup).keyframeSeconds),
    0,
  );

// bench-http's 12 timestamps (a 5-minute 1080p file, GOP 2 s).
const BENCH = [13.7, 37.3, 61.1, 84.9, 108.4, 131.05, 155.5, 179.3, 203.9, 227.2, 251.6, 276.8];

describe("seeks dealt out to the batches that run side by side", () => {
  it("makes the two batches of bench-http's 12 seeks end together, each in time order", () => {
    const packed = packBatches(BENCH.map(group), batchable, 2);
    // Cut in time order: 6.45 s of decoding against 8.3 s.
    expect(packed.map((b) => b.length)).toEqual([6, 6]);
    expect(decoding(packed[1]) - decoding(packed[0])).toBeCloseTo(1.85, 5);

    const dealt = dealtSideBySide(packed, 2);
    if (!dealt) throw new Error("not dealt");
    expect(dealt).toHaveLength(2);
    // Every seek exactly once, each batch's in time order, within a batch's limits (6 seeks).
    expect(
      dealt
        .flat()
        .flatMap((g) => g.times)
        .sort((a, b) => a - b),
    ).toEqual(BENCH);
    for (const batch of dealt) {
      const starts = batch.map((g) => g.times[0]);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      expect(batch.length).toBeLessThanOrEqual(6);
    }
    // About equal: 0.05 s of decoding apart (with the opening cost per seek, the same).
    expect(Math.abs(decoding(dealt[0]) - decoding(dealt[1]))).toBeLessThan(0.1);
  });

  it("leaves alone a plan with a single run, more batches than run at once, or one batch", () => {
    const twelve = BENCH.map(group);
    expect(dealtSideBySide([twelve.slice(0, 6)], 2)).toBeNull();
    expect(dealtSideBySide([twelve.slice(0, 6), [twelve[6]]], 2)).toBeNull();
    expect(
      dealtSideBySide([twelve.slice(0, 4), twelve.slice(4, 8), twelve.slice(8)], 2),
    ).toBeNull();
  });

  it("keeps a batch's limits: groups of several frames are not piled past 8 frames", () => {
    // Four groups of 4 frames: two batches of two groups each, whatever their costs.
    const groups: BatchGroup[] = [10, 30, 50, 70].map((at) => ({
      seekSeconds: at,
      keyframeSeconds: at,
      times: [at + 0.1, at + 0.2, at + 0.3, at + (at === 10 ? 1.9 : 0.4)],
    }));
    const dealt = dealtSideBySide([groups.slice(0, 2), groups.slice(2)], 2);
    if (!dealt) throw new Error("not dealt");
    for (const batch of dealt) expect(batch.flatMap((g) => g.times).length).toBeLessThanOrEqual(8);
  });
});
