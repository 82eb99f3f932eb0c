// skip on a generated clip with a black stretch, a blurred stretch and a frozen stretch:
// exactly the bad frames move, each to the nearest good moment in its window, the delivered
// picture is the one on screen at its reported pts, and a frame with no good moment in its
// window stays where it was asked and says why.
import { describe, expect, it } from "vitest";
import {
  DUPLICATE_MAX_BITS,
  hammingDistance,
  isBlack,
  scorePicture,
} from "../../extractor/quality/picture-scores.ts";
import { planCandidates } from "../../extractor/quality/skip-picker.ts";
import {
  frameBytes,
  makeLavfiClip,
  meanAbsoluteDifference,
  meanLuma,
  referencePictures,
  rgbPixels,
  runJob,
} from "./helpers.ts";

/**
 * 12 s of a scrolling test pattern at 25 fps: black for 2 ≤ t < 3, blurred for 5 ≤ t < 6.4,
 * frozen on frame 200 (8 s) through frame 229 (9.16 s).
 */
function troubledClip(): Promise<string> {
  return makeLavfiClip(
    "troubled",
    ["testsrc2=s=320x180:r=25:d=12"],
    "[0]scroll=horizontal=0.007," +
      "drawbox=color=black:t=fill:enable='gte(t,2)*lt(t,3)'," +
      "boxblur=10:enable='gte(t,5)*lt(t,6.4)'," +
      "split[a][b];[a][b]freezeframes=first=200:last=229:replace=200,format=yuv420p[v]",
  );
}

describe("skip", () => {
  it("moves exactly the black, blurred and repeated frames, to the nearest good moment", async () => {
    const video = await troubledClip();
    const timestamps = [1, 2.5, 5.5, 8.4, 9, 11];
    const run = await runJob(video, {
      mode: "timestamps",
      timestamps,
      format: "png",
      skip: ["black", "blurry", "duplicate"],
    });
    expect(run.outcome.status).toBe("completed");
    const frames = run.outcome.frames;
    expect(frames.map((f) => f.timestamp)).toEqual(timestamps);
    expect(frames.map((f) => f.moved_reason ?? null)).toEqual([
      null,
      "black",
      "blurry",
      null,
      "duplicate",
      null,
    ]);
    // 2.5: 2.75 and 2.25 are black, 3.0 is the first good candidate. 5.5: every candidate
    // within ±1 s is blurred, 6.5 is sharp. 9.0: 9.25 is the first after the freeze.
    expect(frames.map((f) => f.moved_to ?? null)).toEqual([null, 3, 6.5, null, 9.25, null]);
    const pictures = await Promise.all(
      frames.map(async (frame) => rgbPixels(await frameBytes(run, frame.index))),
    );
    const references = await referencePictures(
      video,
      frames.map((frame) => frame.pts ?? -1),
      pictures[0],
    );
    for (const [i, frame] of frames.entries()) {
      const delivered = pictures[i];
      expect(meanAbsoluteDifference(delivered.data, references[i])).toBeLessThan(1.5);
      expect(frame.pts).toBeLessThanOrEqual((frame.moved_to ?? frame.timestamp) + 1e-6);
      expect(frame.pts).toBeGreaterThan((frame.moved_to ?? frame.timestamp) - 0.04);
      expect(meanLuma(delivered.data)).toBeGreaterThan(40);
    }
  });

  it("without skip the same moments are delivered as they are", async () => {
    const video = await troubledClip();
    const run = await runJob(video, { mode: "timestamps", timestamps: [2.5], format: "png" });
    const { data } = await rgbPixels(await frameBytes(run, 1));
    expect(meanLuma(data)).toBeLessThan(5);
    expect(run.outcome.frames[0].moved_reason ?? null).toBeNull();
  });

  it("no good moment in the window: the asked frame is delivered, with the reason and no moved_to", async () => {
    const video = await troubledClip();
    // 8.6's window is ±0.2 s (half the distance to its neighbours): all frozen.
    const run = await runJob(video, {
      mode: "timestamps",
      timestamps: [8.2, 8.6, 9],
      format: "png",
      skip: ["duplicate"],
    });
    const [, middle] = run.outcome.frames;
    expect(middle.status).toBe("ok");
    expect(middle.moved_reason).toBe("duplicate");
    expect(middle.moved_to).toBeNull();
    expect(middle.pts).toBe(8.6);
  });

  it("only the reasons asked for: skip black leaves a blurred frame alone", async () => {
    const video = await troubledClip();
    const run = await runJob(video, { mode: "timestamps", timestamps: [5.5], skip: ["black"] });
    expect(run.outcome.frames[0].moved_reason ?? null).toBeNull();
    expect(run.outcome.frames[0].pts).toBe(5.48);
  });
});

describe("the skip rules, as data", () => {
  const planned = (times: number[]) =>
    times.map((t, i) => ({ index: i + 1, timestamp: t, pastEnd: false }));

  it("candidates lie strictly within half the distance to the neighbours, inside the range", () => {
    const plan = planCandidates(planned([0, 1, 5]), { start: 0, end: 6 }, false);
    const around = (t: number) =>
      plan.candidates
        .filter((c) => plan.ofCandidate.get(c.index)?.wantedTime === t)
        .map((c) => plan.ofCandidate.get(c.index)?.offset);
    expect(around(0)).toEqual([0, 0.25]);
    // Half the way back to 0 is 0.5 (−0.5 is not strictly within it), forward half is 2.
    expect(around(1)).toEqual([0, 0.25, -0.25, 0.5, 1]);
    // 6 is the range's end (excluded), and −2 is not strictly within half the way back to 1.
    expect(around(5)).toEqual([0, 0.25, -0.25, 0.5, -0.5, -1]);
  });

  it("scenes mode looks forward only", () => {
    const plan = planCandidates(planned([2, 8]), { start: 0, end: 12 }, true);
    const offsets = [...plan.ofCandidate.values()].map((c) => c.offset);
    expect(offsets.every((o) => o >= 0)).toBe(true);
    expect(plan.candidates.map((c) => c.timestamp)).toEqual([
      2, 2.25, 2.5, 3, 4, 8, 8.25, 8.5, 9, 10,
    ]);
  });

  function picture(fill: (x: number, y: number) => [number, number, number], w = 64, h = 36) {
    const pixels = Buffer.alloc(w * h * 3);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) pixels.set(fill(x, y), (y * w + x) * 3);
    }
    return scorePicture(pixels, w, h);
  }

  it("black: nearly all dark, or one flat colour; a dark but detailed picture is not", () => {
    expect(isBlack(picture(() => [3, 3, 3]))).toBe(true);
    expect(isBlack(picture(() => [200, 40, 40]))).toBe(true);
    expect(isBlack(picture((x) => (x % 2 ? [60, 60, 60] : [10, 10, 10])))).toBe(false);
  });

  it("dHash: a shifted gradient is not a repeat, the same one slightly brighter is", () => {
    const ramp = picture((x) => [x * 3, x * 3, x * 3]);
    const brighter = picture((x) => [x * 3 + 6, x * 3 + 6, x * 3 + 6]);
    const reversed = picture((x) => [255 - x * 3, 255 - x * 3, 255 - x * 3]);
    expect(hammingDistance(ramp.hash, brighter.hash)).toBeLessThanOrEqual(DUPLICATE_MAX_BITS);
    expect(hammingDistance(ramp.hash, reversed.hash)).toBe(64);
  });

  it("sharpness: a checkerboard is far sharper than its box-blurred self", () => {
    const sharp = picture((x, y) => ((x + y) % 2 ? [255, 255, 255] : [0, 0, 0]));
    const soft = picture(() => [128, 128, 128]);
    expect(sharp.sharpness).toBeGreaterThan(1000);
    expect(soft.sharpness).toBe(0);
  });
});
