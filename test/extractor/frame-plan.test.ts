import { describe, expect, it } from "vitest";
import type { FramePlanOptions } from "../../schema/frame-plan.ts";
import { planFrames, plannedFrameCount } from "../../schema/frame-plan.ts";

const times = (options: FramePlanOptions, duration: number) =>
  planFrames(options, duration).frames.map((f) => f.timestamp);

describe("planFrames", () => {
  it("interval mode: start + k·every for every value below the end, 1-based indexes", () => {
    const plan = planFrames({ mode: "interval", every: 2 }, 7);
    expect(plan.frames).toEqual([
      { index: 1, timestamp: 0, pastEnd: false },
      { index: 2, timestamp: 2, pastEnd: false },
      { index: 3, timestamp: 4, pastEnd: false },
      { index: 4, timestamp: 6, pastEnd: false },
    ]);
    expect(plan.processedSeconds).toBe(7);
  });

  it("interval mode excludes the end itself and survives float noise", () => {
    expect(times({ mode: "interval", every: 2 }, 6)).toEqual([0, 2, 4]);
    expect(times({ mode: "interval", every: 0.3, end: 0.9 }, 10)).toEqual([0, 0.3, 0.6]);
    expect(times({ mode: "interval", every: 0.1, start: 0.2, end: 0.5 }, 10)).toEqual([
      0.2, 0.3, 0.4,
    ]);
  });

  it("interval mode defaults every to 1 s and clamps the end to the video", () => {
    expect(times({ mode: "interval", end: 100 }, 3.5)).toEqual([0, 1, 2, 3]);
    expect(planFrames({ mode: "interval", start: 1, end: 100 }, 3.5).processedSeconds).toBe(2.5);
  });

  it("count mode spaces frames at the middle of N equal slices of the range", () => {
    expect(times({ mode: "count", count: 4 }, 8)).toEqual([1, 3, 5, 7]);
    expect(times({ mode: "count", count: 2, start: 10, end: 20 }, 60)).toEqual([12.5, 17.5]);
    expect(times({ mode: "count", count: 3 }, 1)).toEqual([0.166667, 0.5, 0.833333]);
  });

  it("count mode clamps an end past the video to the video", () => {
    expect(times({ mode: "count", count: 2, end: 100 }, 4)).toEqual([1, 3]);
  });

  it("timestamps mode sorts, keeps duplicates and marks those at or past the end", () => {
    const plan = planFrames({ mode: "timestamps", timestamps: [5, 1, 10, 1, 9.999] }, 10);
    expect(plan.frames.map((f) => [f.index, f.timestamp, f.pastEnd])).toEqual([
      [1, 1, false],
      [2, 1, false],
      [3, 5, false],
      [4, 9.999, false],
      [5, 10, true],
    ]);
  });

  it("a range starting past the end yields frames that are all past the end", () => {
    const plan = planFrames({ mode: "count", count: 3, start: 50 }, 10);
    expect(plan.frames.every((f) => f.pastEnd)).toBe(true);
    expect(plan.frames).toHaveLength(3);
    expect(plan.processedSeconds).toBe(0);
    expect(planFrames({ mode: "interval", every: 1, start: 50 }, 10).frames).toEqual([
      { index: 1, timestamp: 50, pastEnd: true },
    ]);
  });
});

describe("plannedFrameCount", () => {
  it("knows timestamps and count modes without a duration", () => {
    expect(plannedFrameCount({ mode: "timestamps", timestamps: [1, 2, 3] }, null)).toBe(3);
    expect(plannedFrameCount({ mode: "count", count: 42 }, null)).toBe(42);
  });

  it("knows interval mode from an explicit end, or from the duration", () => {
    expect(plannedFrameCount({ mode: "interval", every: 0.5, start: 1, end: 11 }, null)).toBe(20);
    expect(plannedFrameCount({ mode: "interval", every: 0.5 }, null)).toBeNull();
    expect(plannedFrameCount({ mode: "interval", every: 0.5 }, 60)).toBe(120);
    expect(plannedFrameCount({ mode: "interval", every: 0.5, end: 1000 }, 60)).toBe(120);
  });

  it("agrees with planFrames whenever the duration is known", () => {
    const cases: FramePlanOptions[] = [
      { mode: "interval", every: 0.7, start: 0.3 },
      { mode: "interval", every: 3600 },
      { mode: "count", count: 7, start: 2, end: 5 },
      { mode: "timestamps", timestamps: [0, 100] },
    ];
    for (const options of cases) {
      expect(plannedFrameCount(options, 33.3)).toBe(planFrames(options, 33.3).frames.length);
    }
  });
});

describe("plannedFrameCount for the modes the video decides (issue 14)", () => {
  it("scenes and keyframes: count is the upper bound, unknown without it", () => {
    for (const mode of ["scenes", "keyframes"] as const) {
      expect(plannedFrameCount({ mode, count: 7 }, null)).toBe(7);
      expect(plannedFrameCount({ mode, count: 7 }, 3600)).toBe(7);
      expect(plannedFrameCount({ mode }, null)).toBeNull();
      expect(plannedFrameCount({ mode }, 3600)).toBeNull();
    }
  });
});
