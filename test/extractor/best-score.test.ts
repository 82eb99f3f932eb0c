// best mode's pure rules as data: each part of the score on pictures whose answer is known
// by construction, the weights, the shots and gaps between winners, and the cheap pass's
// arguments and log lines.
import { describe, expect, it } from "vitest";
import type { VideoProbe } from "../../extractor/ffmpeg/probe.ts";
import {
  CandidateLog,
  candidatePassArgs,
  candidateStep,
  cutsBefore,
  KEYFRAMES_ONLY_ABOVE_SECONDS,
  planCandidatePass,
} from "../../extractor/quality/best-candidates.ts";
import { minGapSeconds, numberShots, pickWinners } from "../../extractor/quality/best-picker.ts";
import {
  BEST_WEIGHTS,
  scoreQuality,
  scoreSize,
  weightedScore,
} from "../../extractor/quality/best-score.ts";
import { BEST_SCORE_PARTS } from "../../schema/api.ts";

const W = 64;
const H = 36;

function picture(paint: (x: number, y: number) => [number, number, number]): Uint8Array {
  const pixels = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) pixels.set(paint(x, y), (y * W + x) * 3);
  }
  return pixels;
}

const grey = picture(() => [128, 128, 128]);
const black = picture(() => [0, 0, 0]);
const white = picture(() => [255, 255, 255]);
/** One-pixel checkerboard of dark and light grey: the most detail a picture can have. */
const checker = picture((x, y) => ((x + y) % 2 ? [40, 40, 40] : [215, 215, 215]));
/** Eight saturated vertical bars. */
const BARS: [number, number, number][] = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 0],
  [255, 0, 255],
  [0, 255, 255],
  [230, 30, 30],
  [30, 30, 230],
];
const bars = picture((x) => BARS[Math.floor((x * BARS.length) / W)]);
/** A horizontal ramp, black to white: full contrast, smooth (little Laplacian). */
const ramp = picture((x) => {
  const v = Math.round((x * 255) / (W - 1));
  return [v, v, v];
});

const score = (pixels: Uint8Array) => scoreQuality(pixels, W, H);

describe("best-frame score parts", () => {
  it("a flat grey picture has no sharpness, contrast, colour or interest, and is exposed well", () => {
    const { parts } = score(grey);
    expect(parts).toEqual({
      sharpness: 0,
      exposure: expect.closeTo(1, 3),
      contrast: 0,
      colourfulness: 0,
      interest: 0,
    });
  });

  it("black and white pictures are clipped: exposure 0", () => {
    expect(score(black).parts.exposure).toBe(0);
    expect(score(white).parts.exposure).toBe(0);
  });

  it("sharpness follows the Laplacian: a checkerboard is sharp, a ramp is not", () => {
    expect(score(checker).parts.sharpness).toBeGreaterThan(0.95);
    expect(score(ramp).parts.sharpness).toBeLessThan(0.01);
    expect(score(ramp).parts.contrast).toBeGreaterThan(0.9);
  });

  it("colourfulness: saturated bars are colourful, greys are not", () => {
    expect(score(bars).parts.colourfulness).toBe(1);
    expect(score(checker).parts.colourfulness).toBe(0);
  });

  it("interest is the luma histogram's entropy: a ramp of 64 levels spans all six bits", () => {
    expect(score(ramp).parts.interest).toBeCloseTo(1, 1);
    expect(score(checker).parts.interest).toBeCloseTo(1 / 6, 3);
  });

  it("the score is the weighted mean of the parts, and the weights sum to 1", () => {
    const sum = BEST_SCORE_PARTS.reduce((total, part) => total + BEST_WEIGHTS[part], 0);
    expect(sum).toBeCloseTo(1, 9);
    for (const pixels of [grey, black, checker, bars, ramp]) {
      const { score: value, parts } = score(pixels);
      const expected = BEST_SCORE_PARTS.reduce((t, p) => t + BEST_WEIGHTS[p] * parts[p], 0);
      expect(value).toBeCloseTo(expected, 3);
      expect(weightedScore(parts)).toBeCloseTo(expected, 3);
    }
    expect(score(bars).score).toBeGreaterThan(score(grey).score);
  });

  it("scores at a fixed box whatever the video's size, aspect kept, even sides", () => {
    expect(scoreSize(1920, 1080)).toEqual({ width: 256, height: 144 });
    expect(scoreSize(1080, 1920)).toEqual({ width: 144, height: 256 });
    expect(scoreSize(200, 100)).toEqual({ width: 200, height: 100 });
    expect(scoreSize(640, 481)).toEqual({ width: 256, height: 192 });
  });
});

const candidate = (time: number, value: number, cutBefore = 0) => ({
  time,
  score: value,
  parts: { sharpness: 0, exposure: 0, contrast: 0, colourfulness: 0, interest: 0 },
  cutBefore,
});

describe("best-frame winners", () => {
  it("a scene cut at or above the default threshold starts a new shot", () => {
    const shots = numberShots([
      candidate(0, 0.1),
      candidate(0.5, 0.1, 0.2),
      candidate(1, 0.1, 0.3),
      candidate(1.5, 0.1, 0.01),
      candidate(2, 0.1, 0.9),
    ]);
    expect(shots.map((c) => c.shot)).toEqual([0, 0, 1, 1, 2]);
  });

  it("never two from one shot while other shots remain, best first", () => {
    const winners = pickWinners(
      [
        candidate(0, 0.5),
        candidate(0.5, 0.9),
        candidate(1, 0.85),
        candidate(4, 0.3, 0.8),
        candidate(6, 0.6, 0.8),
      ],
      3,
      0.5,
    );
    expect(winners.map((w) => w.time)).toEqual([0.5, 6, 4]);
  });

  it("with fewer shots than count, the rest keep the minimum gap from every winner", () => {
    const one = [0, 0.5, 1, 1.5, 2, 2.5, 3].map((t) => candidate(t, 1 - Math.abs(t - 1) / 10));
    const winners = pickWinners(one, 3, 1);
    // 0 and 2 score alike: the earlier first.
    expect(winners.map((w) => w.time)).toEqual([1, 0, 2]);
    // count is an upper bound: a gap no two candidates keep gives one frame.
    expect(pickWinners(one, 3, 5)).toHaveLength(1);
  });

  it("the gap is the span over twice the count, between the step and 2 s", () => {
    expect(minGapSeconds(60, 3, 0.5)).toBe(2);
    expect(minGapSeconds(6, 3, 0.5)).toBe(1);
    expect(minGapSeconds(2, 10, 0.5)).toBe(0.5);
  });
});

const video = {
  streamIndex: 0,
  width: 1920,
  height: 1080,
  startTime: 1.5,
  timeBase: { num: 1, den: 12800 },
} as VideoProbe;

describe("best-frame cheap pass", () => {
  it("samples every half second, at most 400 candidates, keyframes only over long spans", () => {
    expect(candidateStep(12)).toBe(0.5);
    expect(candidateStep(3600)).toBe(9);
    const short = planCandidatePass("/v.mp4", video, { start: 2, end: 14 });
    expect(short).toMatchObject({ seekSeconds: 3.5, spanSeconds: 12, step: 0.5 });
    expect(short.keyframesOnly).toBe(false);
    const long = planCandidatePass("/v.mp4", video, {
      start: 0,
      end: KEYFRAMES_ONLY_ABOVE_SECONDS + 1,
    });
    expect(long.keyframesOnly).toBe(true);
    const args = candidatePassArgs(long);
    expect(args.slice(args.indexOf("-skip_frame"), args.indexOf("-skip_frame") + 2)).toEqual([
      "-skip_frame",
      "nokey",
    ]);
    const graph = args[args.indexOf("-vf") + 1];
    expect(graph).toContain("scale=256:144:flags=area");
    expect(graph).toContain(`gte(t-prev_selected_t\\,${long.step.toFixed(6)})`);
    expect(args).toContain("passthrough");
  });

  it("reads scene scores and candidates from ffmpeg's log, and the strongest cut between", () => {
    const log = new CandidateLog();
    const lines = [
      "[Parsed_metadata_2 @ 0x5] [info] frame:0    pts:12800   pts_time:1",
      "[Parsed_metadata_2 @ 0x5] [info] lavfi.scene_score=0.000000",
      "[Parsed_showinfo_4 @ 0x6] [info] n:   0 pts:  12800 pts_time:1       pos: 1 fmt:rgb24",
      "[Parsed_metadata_2 @ 0x5] [info] frame:1    pts:13312   pts_time:1.04",
      "[Parsed_metadata_2 @ 0x5] [info] lavfi.scene_score=0.700000",
      "[Parsed_metadata_2 @ 0x5] [info] frame:2    pts:13824   pts_time:1.08",
      "[Parsed_metadata_2 @ 0x5] [info] lavfi.scene_score=0.010000",
      "[Parsed_showinfo_4 @ 0x6] [info] n:   1 pts:  13824 pts_time:1.08     pos: 2 fmt:rgb24",
    ];
    expect(lines.every((line) => log.read(line))).toBe(true);
    expect(log.read("[h264 @ 0x1] [error] something else")).toBe(false);
    expect(log.candidateTicks).toEqual([12800, 13824]);
    expect(cutsBefore(log.candidateTicks, log.sceneScores)).toEqual([0, 0.7]);
  });
});
