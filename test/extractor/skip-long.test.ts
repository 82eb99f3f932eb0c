// skip on a long job: candidates multiply the times one decode must take (up to 9 per frame),
// past what one ffmpeg run's expression holds; the job still completes, every frame exact to
// its own pts. A tiny 25-minute clip keeps the decode cheap.
import { expect, it } from "vitest";
import { cfrFrameAt, makeLavfiClip, runJob } from "./helpers.ts";

it("700 frames with skip on a 25-minute clip: 4,900 candidate moments, decoded in runs", async () => {
  const video = await makeLavfiClip(
    "long-small",
    ["testsrc2=s=96x54:r=10:d=1500"],
    "[0]format=yuv420p[v]",
    ["-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-pix_fmt", "yuv420p"],
  );
  const run = await runJob(video, { mode: "count", count: 700, skip: ["duplicate"] });
  expect(run.outcome.error).toBeNull();
  expect(run.outcome.status).toBe("completed");
  const frames = run.outcome.frames;
  expect(frames.filter((f) => f.status === "ok")).toHaveLength(700);
  // Moved or not, each picture is the frame on screen at the moment it was taken from.
  for (const frame of frames) {
    const moment = frame.moved_to ?? frame.timestamp;
    expect(frame.pts).toBe(cfrFrameAt(moment, 10) / 10);
    if (frame.moved_to != null) expect(frame.moved_reason).toBe("duplicate");
  }
}, 300_000);
