// keyframes mode: exactly the stream's keyframes as `ffprobe -skip_frame nokey` lists them,
// each delivered picture the keyframe itself (VP9 too, whose decoder ignores -skip_frame), and
// count spreading a cap evenly.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import {
  deliveredNumbers,
  ffprobeFrameTimes,
  frameBytes,
  makeLavfiClip,
  meanAbsoluteDifference,
  referencePictures,
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
    const delivered = await Promise.all(
      run.outcome.frames.map(async (frame) => rgbPixels(await frameBytes(run, frame.index))),
    );
    const times = run.outcome.frames.map((frame) => frame.timestamp);
    const references = await referencePictures(video, times, delivered[0]);
    for (const [i, picture] of delivered.entries()) {
      expect(meanAbsoluteDifference(picture.data, references[i])).toBeLessThan(1.5);
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

  it("VP9 (whose decoder decodes every frame despite -skip_frame): only the keyframes", async () => {
    // 6 s at 30 fps, a keyframe at most every 45 frames. A WebM has no MP4 index to read, so
    // the list comes from ffprobe. The truth is the container's own keyframe flags, read
    // without decoding.
    const video = await makeTestVideo({
      codec: "vp9",
      container: "webm",
      durationSeconds: 6,
      gop: 45,
    });
    const { stdout } = await promisify(execFile)("ffprobe", [
      "-v",
      "error",
      "-select_streams",
      "v:0",
      "-show_entries",
      "packet=pts_time,flags",
      "-of",
      "csv=p=0",
      video,
    ]);
    const keyPackets = stdout
      .split("\n")
      .filter((row) => row.split(",")[1]?.startsWith("K"))
      .map((row) => Number(row.split(",")[0]))
      .sort((a, b) => a - b);
    expect(keyPackets.length).toBeGreaterThanOrEqual(4);
    expect(keyPackets.length).toBeLessThan(20);
    const run = await runJob(video, { mode: "keyframes" });
    expect(run.outcome.status).toBe("completed");
    expect(run.outcome.frames.map((f) => f.timestamp)).toEqual(keyPackets);
    // WebM times are whole milliseconds: a keyframe's number is its time × 30, rounded.
    expect(await deliveredNumbers(run)).toEqual(keyPackets.map((t) => Math.round(t * 30)));
  });
});
