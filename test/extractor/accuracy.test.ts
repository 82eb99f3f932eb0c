// The right frame for every moment: each test video shows its frame number in its pixels, and
// the expected number comes from the frame rate (or ffprobe's frame list), never from the code
// under test.
import { describe, expect, it } from "vitest";
import { makeTestVideo, probeFrameTimes, vfrFrameTime } from "../support/videos.ts";
import { cfrFrameAt, deliveredNumbers, runJob } from "./helpers.ts";

/** The last frame whose presentation time is ≤ t, from a list of frame times. */
function lastFrameAtOrBefore(frameTimes: number[], t: number): number {
  let found = 0;
  frameTimes.forEach((time, n) => {
    if (time <= t + 1e-9) found = n;
  });
  return found;
}

describe("the frame on screen at t", () => {
  for (const fps of [30, 25]) {
    it(`${fps} fps: exact frame times and the instants just before them`, async () => {
      const video = await makeTestVideo({ fps, durationSeconds: 2 });
      const timestamps = [0, 1 / fps, 10 / fps - 0.0005, 10 / fps, 1, 1.5 - 0.0001, 1.99];
      const run = await runJob(video, { mode: "timestamps", timestamps });
      const sorted = [...timestamps].sort((a, b) => a - b);
      expect(await deliveredNumbers(run)).toEqual(sorted.map((t) => cfrFrameAt(t, fps)));
    });
  }

  it("29.97 fps (30000/1001): no drift, no off-by-one at frame boundaries", async () => {
    const video = await makeTestVideo({ fps: "30000/1001", durationSeconds: 2 });
    const frame = 1001 / 30000;
    const timestamps = [29 * frame, 30 * frame - 0.0001, 1, 30 * frame, 59 * frame, 1.99];
    const run = await runJob(video, { mode: "timestamps", timestamps });
    const expected = timestamps.map((t) => Math.floor(t / frame + 1e-9));
    expect(expected).toEqual([29, 29, 29, 30, 59, 59]);
    expect(await deliveredNumbers(run)).toEqual(expected);
    expect(run.outcome.frames.map((f) => f.pts)).toEqual(
      expected.map((n) => Math.round(n * frame * 1e6) / 1e6),
    );
  });

  it("B-frames with short GOPs: presentation order, not decode order", async () => {
    const video = await makeTestVideo({ fps: 25, bframes: 3, gop: 12, durationSeconds: 3 });
    const run = await runJob(video, { mode: "interval", every: 0.12 });
    const expected = run.outcome.frames.map((f) => cfrFrameAt(f.timestamp, 25));
    expect(run.outcome.frames).toHaveLength(25);
    expect(await deliveredNumbers(run)).toEqual(expected);
  });

  it("variable frame rate: the frame actually on screen, reported with its own pts", async () => {
    const video = await makeTestVideo({ variableFrameRate: true, durationSeconds: 3 });
    const frameTimes = await probeFrameTimes(video);
    // The oracle agrees with the generator's formula before we trust it.
    expect(frameTimes.slice(0, 8)).toEqual(
      Array.from({ length: 8 }, (_, n) => expect.closeTo(vfrFrameTime(n), 5)),
    );
    const run = await runJob(video, { mode: "interval", every: 0.05, end: 2 });
    const expected = run.outcome.frames.map((f) => lastFrameAtOrBefore(frameTimes, f.timestamp));
    expect(new Set(expected).size).toBeGreaterThan(10);
    expect(await deliveredNumbers(run)).toEqual(expected);
    for (const [i, f] of run.outcome.frames.entries()) {
      expect(f.pts).toBeCloseTo(frameTimes[expected[i]], 5);
    }
  });

  for (const container of ["mp4", "mkv"] as const) {
    it(`a first frame at 5 s (${container}): times count from the first frame`, async () => {
      const video = await makeTestVideo({ startTime: 5, container, durationSeconds: 2 });
      const run = await runJob(video, { mode: "timestamps", timestamps: [0, 0.5, 1.99, 5.5] });
      expect(run.outcome.duration_seconds).toBeCloseTo(2, 2);
      expect(await deliveredNumbers(run)).toEqual([0, 15, 59, null]);
      // Matroska keeps milliseconds.
      expect(run.outcome.frames.map((f) => f.pts)).toEqual([
        0,
        0.5,
        expect.closeTo(59 / 30, 2),
        null,
      ]);
    });
  }

  for (const [codec, container] of [
    ["h264", "mp4"],
    ["h264", "mov"],
    ["vp9", "webm"],
  ] as const) {
    it(`${codec} in .${container}`, async () => {
      const video = await makeTestVideo({ codec, container, durationSeconds: 2 });
      const run = await runJob(video, { mode: "count", count: 4 });
      expect(run.outcome.status).toBe("completed");
      expect(await deliveredNumbers(run)).toEqual(
        [0.25, 0.75, 1.25, 1.75].map((t) => cfrFrameAt(t, 30)),
      );
    });
  }
});

describe("ranges and the end of the video", () => {
  it("interval mode within start/end, end excluded", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const run = await runJob(video, { mode: "interval", every: 0.5, start: 1, end: 2.5 });
    expect(run.outcome.frames.map((f) => f.timestamp)).toEqual([1, 1.5, 2]);
    expect(await deliveredNumbers(run)).toEqual([30, 45, 60]);
    expect(run.outcome.processed_seconds).toBe(1.5);
  });

  it("count mode spreads frames over the range", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const run = await runJob(video, { mode: "count", count: 2, start: 1, end: 3 });
    expect(run.outcome.frames.map((f) => f.timestamp)).toEqual([1.5, 2.5]);
    expect(await deliveredNumbers(run)).toEqual([45, 75]);
  });

  it("timestamps past the end are error frames; the rest are delivered", async () => {
    const video = await makeTestVideo({ durationSeconds: 2 });
    const run = await runJob(video, { mode: "timestamps", timestamps: [3, 1, 2, 1.999] });
    expect(run.outcome.status).toBe("completed");
    expect(run.outcome.frames.map((f) => [f.timestamp, f.status])).toEqual([
      [1, "ok"],
      [1.999, "ok"],
      [2, "error"],
      [3, "error"],
    ]);
    expect(run.outcome.frames[2].error).toMatch(/past the end/);
    expect(await deliveredNumbers(run)).toEqual([30, 59, null, null]);
  });

  it("the last microsecond before the end still shows the last frame, dense and sparse", async () => {
    // ffmpeg's end of stream counts a wanted time only when it lies more than the pts
    // tolerance (1 µs) before the end: 1.999999 s of a 2 s video once got no frame at all.
    const video = await makeTestVideo({ durationSeconds: 2 });
    for (const strategy of ["dense", "sparse"] as const) {
      const run = await runJob(
        video,
        { mode: "timestamps", timestamps: [0.5, 1.999998, 1.999999] },
        { strategy },
      );
      expect(run.outcome.frames.map((f) => [f.timestamp, f.status, f.pts])).toEqual([
        [0.5, "ok", 0.5],
        [1.999998, "ok", 1.966667],
        [1.999999, "ok", 1.966667],
      ]);
      expect(await deliveredNumbers(run)).toEqual([15, 59, 59]);
    }
  });

  it("duplicate timestamps each get their own file with the same picture", async () => {
    const video = await makeTestVideo({ durationSeconds: 2 });
    const run = await runJob(video, { mode: "timestamps", timestamps: [0.5, 0.5] });
    expect(run.outcome.frames.map((f) => f.key)).toEqual(["frame-0001.jpg", "frame-0002.jpg"]);
    expect(await deliveredNumbers(run)).toEqual([15, 15]);
  });
});

describe("dense and sparse decoding agree", () => {
  it("seeking per keyframe cluster gives the same frames as one continuous decode", async () => {
    const video = await makeTestVideo({
      durationSeconds: 12,
      gop: 30,
      bframes: 3,
      width: 160,
      height: 90,
    });
    const timestamps = [0.9667, 1, 3.0333, 3.05, 5.999, 6, 8.5, 11.98];
    const dense = await runJob(video, { mode: "timestamps", timestamps }, { strategy: "dense" });
    const expected = timestamps.map((t) => cfrFrameAt(t, 30));
    expect(await deliveredNumbers(dense)).toEqual(expected);
    for (const runsAhead of [0, 1, 3]) {
      const sparse = await runJob(
        video,
        { mode: "timestamps", timestamps },
        { strategy: "sparse", runsAhead },
      );
      expect(await deliveredNumbers(sparse)).toEqual(expected);
      expect(sparse.outcome.frames.map((f) => f.pts)).toEqual(
        dense.outcome.frames.map((f) => f.pts),
      );
    }
  });

  it("sparse decoding of a WebM (seeking through Cues)", async () => {
    const video = await makeTestVideo({
      codec: "vp9",
      container: "webm",
      durationSeconds: 8,
      gop: 30,
    });
    const run = await runJob(video, { mode: "interval", every: 2.5 }, { strategy: "sparse" });
    expect(await deliveredNumbers(run)).toEqual([0, 2.5, 5, 7.5].map((t) => cfrFrameAt(t, 30)));
  });
});
