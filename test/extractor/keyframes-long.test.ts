// keyframes on a long stream with thousands of keyframes (more than one decode run's list
// holds): every keyframe ffprobe lists comes back, each the picture at its own pts.
import { expect, it } from "vitest";
import { cfrFrameAt, ffprobeFrameTimes, makeLavfiClip, runJob } from "./helpers.ts";

it("2,500 uneven keyframes of a 25-minute clip, all delivered at their pts", async () => {
  const video = await makeLavfiClip(
    "long-small-gop5",
    ["testsrc2=s=96x54:r=10:d=1500"],
    "[0]format=yuv420p[v]",
    // Keyframes 0.7 and 0.5 s apart in turn: an uneven list, not a grid.
    [
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-g",
      "1000",
      "-force_key_frames",
      "expr:gte(t,n_forced*0.6+mod(n_forced,2)*0.1)",
      "-pix_fmt",
      "yuv420p",
    ],
  );
  const expected = await ffprobeFrameTimes(video, true);
  expect(expected.length).toBeGreaterThan(2400);
  const run = await runJob(video, { mode: "keyframes" });
  expect(run.outcome.error).toBeNull();
  expect(run.outcome.frames.map((f) => f.timestamp)).toEqual(expected);
  for (const frame of run.outcome.frames) {
    expect(frame.status).toBe("ok");
    expect(frame.pts).toBe(cfrFrameAt(frame.timestamp, 10) / 10);
  }
}, 600_000);
