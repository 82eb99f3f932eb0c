// mode "best" on a generated clip of six 2 s stretches, each a different flaw, one crisp: the
// winner comes from the crisp stretch, three winners from three different stretches in score
// order, each frame exactly the picture the source shows at its pts (checked against ffmpeg's
// own decode), and a range keeps the winners inside it.
import { describe, expect, it } from "vitest";
import { BEST_WEIGHTS } from "../../extractor/quality/best-score.ts";
import { BEST_SCORE_PARTS } from "../../schema/api.ts";
import { QUALITY_STRETCHES, qualityClip, STRETCH_SECONDS } from "../support/quality-clip.ts";
import { makeTestVideo } from "../support/videos.ts";
import {
  deliveredNumbers,
  frameBytes,
  meanAbsoluteDifference,
  referencePictures,
  rgbPixels,
  runJob,
} from "./helpers.ts";

const stretchOf = (t: number) => Math.floor(t / STRETCH_SECONDS);
const CRISP = QUALITY_STRETCHES.indexOf("crisp");

async function expectExact(video: string, run: Awaited<ReturnType<typeof runJob>>) {
  const frames = run.outcome.frames;
  const delivered = await Promise.all(
    frames.map(async (frame) => rgbPixels(await frameBytes(run, frame.index))),
  );
  const size = { width: 640, height: 360 };
  const references = await referencePictures(
    video,
    frames.map((f) => f.pts ?? -1),
    size,
  );
  for (const [i, frame] of frames.entries()) {
    expect(frame.status).toBe("ok");
    // The moment is the frame's own pts: the sparse engine delivered exactly that frame.
    expect(frame.pts).toBe(frame.timestamp);
    expect([delivered[i].width, delivered[i].height]).toEqual([640, 360]);
    // PNG is lossless: the only difference from ffmpeg's own picture is rounding.
    expect(meanAbsoluteDifference(delivered[i].data, references[i])).toBeLessThan(1.5);
  }
}

describe("mode best", () => {
  it("names each winner by its own pts on a VP9 WebM whose first frame is at 1.5 s", async () => {
    const video = await makeTestVideo({
      codec: "vp9",
      container: "webm",
      startTime: 1.5,
      fps: 25,
      durationSeconds: 4,
    });
    const run = await runJob(video, { mode: "best", count: 2 });
    expect(run.outcome.status).toBe("completed");
    expect(run.outcome.frames).toHaveLength(2);
    const numbers = await deliveredNumbers(run);
    for (const [i, frame] of run.outcome.frames.entries()) {
      expect(frame.status).toBe("ok");
      expect(frame.pts).toBe(frame.timestamp);
      // The frame whose pts it names: frame n is at n/25 s from the first.
      expect(numbers[i]).toBe(Math.round((frame.timestamp ?? 0) * 25));
    }
  });

  it("count 1 returns a frame of the crisp stretch, exact at full size", async () => {
    const video = await qualityClip();
    const run = await runJob(video, { mode: "best", count: 1, format: "png" });
    expect(run.outcome.status).toBe("completed");
    expect(run.outcome.frames).toHaveLength(1);
    const [frame] = run.outcome.frames;
    expect(QUALITY_STRETCHES[stretchOf(frame.timestamp)]).toBe("crisp");
    await expectExact(video, run);
    // The crisp picture is sharp and colourful by its parts, not only by its place.
    expect(frame.score_parts?.sharpness).toBeGreaterThan(0.5);
    expect(frame.score_parts?.colourfulness).toBeGreaterThan(0.8);
  });

  it("count 3 returns three different stretches, best first, each score its weighted parts", async () => {
    const video = await qualityClip();
    const run = await runJob(video, { mode: "best", count: 3, format: "png" });
    expect(run.outcome.status).toBe("completed");
    const frames = run.outcome.frames;
    expect(frames.map((f) => f.index)).toEqual([1, 2, 3]);
    expect(stretchOf(frames[0].timestamp)).toBe(CRISP);
    expect(new Set(frames.map((f) => stretchOf(f.timestamp))).size).toBe(3);
    const scores = frames.map((f) => f.score ?? -1);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const frame of frames) {
      const parts = frame.score_parts;
      if (!parts) throw new Error("a best frame carries its score's parts");
      expect(Object.keys(parts).sort()).toEqual([...BEST_SCORE_PARTS].sort());
      let weighted = 0;
      for (const part of BEST_SCORE_PARTS) {
        expect(parts[part]).toBeGreaterThanOrEqual(0);
        expect(parts[part]).toBeLessThanOrEqual(1);
        weighted += BEST_WEIGHTS[part] * parts[part];
      }
      expect(frame.score).toBeCloseTo(weighted, 3);
    }
    // The flat grey stretch has nothing to offer: never among the best three.
    expect(frames.some((f) => QUALITY_STRETCHES[stretchOf(f.timestamp)] === "flat grey")).toBe(
      false,
    );
    await expectExact(video, run);
  });

  it("keeps the winners inside start–end", async () => {
    const video = await qualityClip();
    const run = await runJob(video, { mode: "best", count: 2, start: 0, end: 8, format: "png" });
    expect(run.outcome.status).toBe("completed");
    expect(run.outcome.processed_seconds).toBe(8);
    for (const frame of run.outcome.frames) {
      expect(frame.timestamp).toBeGreaterThanOrEqual(0);
      expect(frame.timestamp).toBeLessThan(8);
    }
    // Of the four flawed stretches in range, the blurred (well exposed, colourful) one wins.
    expect(QUALITY_STRETCHES[stretchOf(run.outcome.frames[0].timestamp)]).toBe("blurred");
    await expectExact(video, run);
    // A range starting mid-video: the pass seeks there, and the crisp stretch is in it.
    const later = await runJob(video, {
      mode: "best",
      count: 2,
      start: 3.3,
      end: 11,
      format: "png",
    });
    expect(later.outcome.frames.every((f) => f.timestamp >= 3.3 && f.timestamp < 11)).toBe(true);
    expect(stretchOf(later.outcome.frames[0].timestamp)).toBe(CRISP);
    await expectExact(video, later);
  });
});
