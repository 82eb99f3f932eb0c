// job.video from what the extractor already reads: every completed job says how long the video
// is, its size as displayed, frame rate, codec, rotation and whether it has sound. The files are
// made with known facts (test/support/videos.ts), and the facts are checked against them.
import { describe, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import { runJob } from "./helpers.ts";

describe("job.video for direct files", () => {
  it("a phone video turned 90°, with sound: displayed size, rotation and audio", async () => {
    const file = await makeTestVideo({
      width: 180,
      height: 320,
      rotation: 90,
      fps: 25,
      durationSeconds: 2,
      audio: true,
    });
    const { outcome } = await runJob(file, { mode: "count", count: 2 });
    expect(outcome.status).toBe("completed");
    expect(outcome.video).toEqual({
      duration_seconds: expect.closeTo(2, 1),
      width: 180,
      height: 320,
      frame_rate: 25,
      codec: "h264",
      rotation: 90,
      has_audio: true,
    });
    // A direct file has no platform facts: not even null placeholders.
    expect(Object.keys(outcome.video ?? {})).not.toContain("title");
  });

  it("a silent VP9 WebM at 29.97 fps", async () => {
    const file = await makeTestVideo({
      width: 320,
      height: 180,
      fps: "30000/1001",
      codec: "vp9",
      container: "webm",
      durationSeconds: 3,
    });
    const { outcome } = await runJob(file, { mode: "count", count: 1 });
    expect(outcome.status).toBe("completed");
    expect(outcome.video).toMatchObject({
      width: 320,
      height: 180,
      frame_rate: 29.97,
      codec: "vp9",
      rotation: 0,
      has_audio: false,
    });
    expect(outcome.video?.duration_seconds).toBeCloseTo(3, 1);
    expect(outcome.video?.duration_seconds).toBe(outcome.duration_seconds);
  });
});
