// keyframes mode: exactly the stream's keyframes as `ffprobe -skip_frame nokey` lists them,
// each delivered picture the keyframe itself, and count spreading a cap evenly.
import { describe, expect, it } from "vitest";
import {
  ffprobeFrameTimes,
  frameBytes,
  makeLavfiClip,
  meanAbsoluteDifference,
  referencePicture,
  rgbPixels,
  runJob,
} from "./helpers.ts";

/** 8 s, keyframes every 12 frames plus x264's own at the cuts (it is free to place them). */
function gopClip(): Promise<string> {
  return makeLavfiClip(
    "gop-cuts",
    [
      "testsrc2=s=320x180:r=25:d=3",
      "mandelbrot=s=320x180:r=25,trim=duration=2.3",
      "testsrc=s=320x180:r=25:d=2.7",
    ],
    "[0][1][2]concat=n=3:v=1,format=yuv420p[v]",
    ["-c:v", "libx264", "-g", "12", "-keyint_min", "5", "-bf", "3", "-pix_fmt", "yuv420p"],
  );
}

describe("mode keyframes", () => {
  it("returns exactly the keyframes ffprobe -skip_frame nokey lists, each the keyframe's picture", async () => {
    const video = await gopClip();
    const expected = await ffprobeFrameTimes(video, true);
    expect(expected.length).toBeGreaterThan(10);
    const run = await runJob(video, { mode: "keyframes", format: "png" });
    expect(run.outcome.status).toBe("completed");
    expect(run.outcome.frames.map((f) => f.timestamp)).toEqual(expected);
    expect(run.outcome.frames.map((f) => f.pts)).toEqual(expected);
    for (const frame of run.outcome.frames) {
      const delivered = await rgbPixels(await frameBytes(run, frame.index));
      const reference = await referencePicture(video, frame.timestamp, delivered);
      expect(meanAbsoluteDifference(delivered.data, reference)).toBeLessThan(1.5);
    }
  });

  it("count caps the keyframes, spread evenly over the list", async () => {
    const video = await gopClip();
    const all = await ffprobeFrameTimes(video, true);
    const run = await runJob(video, { mode: "keyframes", count: 4 });
    const expected = [0, 1, 2, 3].map((i) => all[Math.floor(((i + 0.5) * all.length) / 4)]);
    expect(run.outcome.frames.map((f) => f.timestamp)).toEqual(expected);
  });

  it("a range keeps the keyframes inside it", async () => {
    const video = await gopClip();
    const all = await ffprobeFrameTimes(video, true);
    const run = await runJob(video, { mode: "keyframes", start: 2, end: 5 });
    expect(run.outcome.frames.map((f) => f.timestamp)).toEqual(all.filter((t) => t >= 2 && t < 5));
  });
});
