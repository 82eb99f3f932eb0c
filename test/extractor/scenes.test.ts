// scenes mode on generated clips with known cuts: every cut found and no false one at the
// default sensitivity, each frame exactly the picture at its reported pts (checked against
// ffmpeg's own decode), and skip black moves the fade-in's black opening off black.
import { describe, expect, it } from "vitest";
import { pickSceneCuts, sceneThreshold, spreadEvenly } from "../../extractor/quality/scenes.ts";
import {
  frameBytes,
  makeLavfiClip,
  meanAbsoluteDifference,
  meanLuma,
  referencePictures,
  rgbPixels,
  runJob,
} from "./helpers.ts";

const SHOT = "s=320x180:r=25:d=2";

/** Six 2 s shots at 25 fps, cuts at 2, 4, 6, 8, 10 s; the first fades in from black over 1 s. */
function sixShots(): Promise<string> {
  return makeLavfiClip(
    "six-shots",
    [
      `testsrc2=${SHOT},fade=in:st=0:d=1`,
      `smptehdbars=${SHOT}`,
      "mandelbrot=s=320x180:r=25,trim=duration=2",
      `testsrc=${SHOT}`,
      `rgbtestsrc=${SHOT}`,
      `gradients=${SHOT}:speed=0.05`,
    ],
    "[0][1][2][3][4][5]concat=n=6:v=1,format=yuv420p[v]",
  );
}

const CUTS = [2, 4, 6, 8, 10];

async function expectExact(video: string, run: Awaited<ReturnType<typeof runJob>>) {
  const frames = run.outcome.frames;
  const delivered = await Promise.all(
    frames.map(async (frame) => rgbPixels(await frameBytes(run, frame.index))),
  );
  // Each frame's picture and the one a frame (0.04 s) before it, in one decode.
  const ptsOf = frames.map((frame) => frame.pts ?? -1);
  const beforeOf = ptsOf.map((pts) => (pts >= 0.04 ? Math.round((pts - 0.04) * 1e6) / 1e6 : null));
  const asked = [...ptsOf, ...beforeOf.filter((pts): pts is number => pts !== null)];
  const pictures = await referencePictures(video, asked, delivered[0] ?? { width: 0, height: 0 });
  const pictureAt = (pts: number) => pictures[asked.indexOf(pts)];
  for (const [i, frame] of frames.entries()) {
    expect(frame.status).toBe("ok");
    const reference = pictureAt(ptsOf[i]);
    // PNG is lossless: the only difference from ffmpeg's own picture is rounding.
    expect(meanAbsoluteDifference(delivered[i].data, reference)).toBeLessThan(1.5);
    const before = beforeOf[i];
    if (before !== null) {
      expect(meanAbsoluteDifference(delivered[i].data, reference)).toBeLessThanOrEqual(
        meanAbsoluteDifference(delivered[i].data, pictureAt(before)),
      );
    }
  }
}

describe("mode scenes", () => {
  it("finds the opening and every cut, no false ones, each frame exact", async () => {
    const video = await sixShots();
    const run = await runJob(video, { mode: "scenes", format: "png" });
    expect(run.outcome.status).toBe("completed");
    const frames = run.outcome.frames;
    expect(frames.map((f) => f.timestamp)).toEqual([0, ...CUTS]);
    expect(frames.map((f) => f.pts)).toEqual([0, ...CUTS]);
    expect(frames[0].scene_score).toBe(1);
    // Every cut clears the default threshold, and nothing within a shot comes near it.
    for (const frame of frames.slice(1)) {
      expect(frame.scene_score).toBeGreaterThan(sceneThreshold());
    }
    expect(run.outcome.processed_seconds).toBe(12);
    await expectExact(video, run);
  });

  it("must show: six shots, the first fading in from black, with skip black: 6 frames, none black, each exact", async () => {
    const video = await sixShots();
    const plain = await runJob(video, { mode: "scenes", format: "png" });
    // Without skip the opening is the fade's first, black, picture.
    expect(meanLuma((await rgbPixels(await frameBytes(plain, 1))).data)).toBeLessThan(5);

    const run = await runJob(video, { mode: "scenes", format: "png", skip: ["black"] });
    const frames = run.outcome.frames;
    expect(frames).toHaveLength(6);
    expect(frames.map((f) => f.timestamp)).toEqual([0, ...CUTS]);
    for (const frame of frames) {
      const { data } = await rgbPixels(await frameBytes(run, frame.index));
      expect(meanLuma(data)).toBeGreaterThan(25);
    }
    // Only the opening moved, forward (before it there is nothing), within the fade.
    expect(frames[0].moved_reason).toBe("black");
    expect(frames[0].moved_to).toBeGreaterThan(0);
    expect(frames[0].moved_to).toBeLessThanOrEqual(1);
    expect(frames[0].pts).toBeLessThanOrEqual(frames[0].moved_to ?? -1);
    for (const frame of frames.slice(1)) {
      expect(frame.moved_reason ?? null).toBeNull();
      expect(frame.pts).toBe(frame.timestamp);
    }
    await expectExact(video, run);
  });

  it("count keeps the opening and the strongest cuts; sensitivity 0 keeps only stark ones", async () => {
    const video = await sixShots();
    const all = await runJob(video, { mode: "scenes", format: "png" });
    const strongest = [...all.outcome.frames.slice(1)]
      .sort((a, b) => (b.scene_score ?? 0) - (a.scene_score ?? 0))
      .slice(0, 2)
      .map((f) => f.timestamp)
      .sort((a, b) => a - b);
    const capped = await runJob(video, { mode: "scenes", format: "png", count: 3 });
    expect(capped.outcome.frames.map((f) => f.timestamp)).toEqual([0, ...strongest]);

    const strict = await runJob(video, { mode: "scenes", sensitivity: 0 });
    const expected = all.outcome.frames.filter((f) => (f.scene_score ?? 0) >= 0.5);
    expect(strict.outcome.frames.map((f) => f.timestamp)).toEqual(expected.map((f) => f.timestamp));
  });

  it("a range: the first frame in it opens, cuts outside it are left out", async () => {
    const video = await sixShots();
    const run = await runJob(video, { mode: "scenes", start: 3, end: 9 });
    expect(run.outcome.frames.map((f) => f.timestamp)).toEqual([3, 4, 6, 8]);
    expect(run.outcome.processed_seconds).toBe(6);
  });
});

describe("the cut rule, as data", () => {
  const samples = [
    { time: 0, score: 0 },
    { time: 1, score: 0.03 },
    { time: 2, score: 0.6 },
    { time: 2.1, score: 0.9 },
    { time: 3, score: 0.3 },
    { time: 4, score: 0.8 },
  ];
  const whole = { rangeStart: 0, rangeEnd: 10 };

  it("sensitivity maps linearly to the threshold: 0 → 0.5, 0.5 → 0.275, 1 → 0.05", () => {
    expect(sceneThreshold(0)).toBeCloseTo(0.5, 9);
    expect(sceneThreshold()).toBeCloseTo(0.275, 9);
    expect(sceneThreshold(1)).toBeCloseTo(0.05, 9);
  });

  it("opening at score 1, cuts at or above the threshold, one change per 0.2 s", () => {
    expect(pickSceneCuts(samples, whole)).toEqual([
      { time: 0, score: 1 },
      { time: 2, score: 0.6 },
      { time: 3, score: 0.3 },
      { time: 4, score: 0.8 },
    ]);
    expect(pickSceneCuts(samples, { ...whole, sensitivity: 0 }).map((c) => c.time)).toEqual([
      0, 2, 4,
    ]);
  });

  it("count keeps the opening and the strongest, in time order; a range opens at its first frame", () => {
    expect(pickSceneCuts(samples, { ...whole, count: 2 }).map((c) => c.time)).toEqual([0, 4]);
    expect(pickSceneCuts(samples, { ...whole, count: 1 }).map((c) => c.time)).toEqual([0]);
    expect(pickSceneCuts(samples, { rangeStart: 2.05, rangeEnd: 4 })).toEqual([
      { time: 2.1, score: 1 },
      { time: 3, score: 0.3 },
    ]);
    expect(pickSceneCuts([], whole)).toEqual([]);
  });

  it("spreadEvenly picks the i-th of n at ⌊(i + ½)·len/n⌋, and all when n is not smaller", () => {
    expect(spreadEvenly([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 3)).toEqual([1, 5, 8]);
    expect(spreadEvenly([0, 1], 5)).toEqual([0, 1]);
    expect(spreadEvenly([0, 1], undefined)).toEqual([0, 1]);
  });
});
