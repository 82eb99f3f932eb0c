// slides mode's rule as data (extractor/quality/slides.ts, decision 0300): grids of cell means
// made by hand, no ffmpeg. A pointer-sized change is not a change, a wide one is; a fade is
// never a slide; a revisited picture repeats its first showing; count keeps the most distinct;
// with text, a near picture whose text agrees repeats and a same picture whose text differs
// does not.
import { describe, expect, it } from "vitest";
import type { SlideGrid, SlideSample } from "../../extractor/quality/slides.ts";
import {
  CELL_DELTA,
  editDistance,
  findSlides,
  pictureDistance,
  repeatsWithText,
  textSimilarity,
} from "../../extractor/quality/slides.ts";

const GRID: SlideGrid = { columns: 32, rows: 18 };
const STEP = 0.25;

/** A flat picture of grey `level`, with `lines` rows (from row 4) of "text" at grey 255. */
function page(level: number, lines: number[] = []): Uint8Array {
  const cells = new Uint8Array(GRID.columns * GRID.rows).fill(level);
  for (const row of lines) cells.fill(255, row * GRID.columns + 4, row * GRID.columns + 28);
  return cells;
}

function withPointer(cells: Uint8Array, x: number, y: number): Uint8Array {
  const copy = Uint8Array.from(cells);
  for (let dy = 0; dy < 2; dy++) {
    for (let dx = 0; dx < 2; dx++) copy[(y + dy) * GRID.columns + x + dx] = 0;
  }
  return copy;
}

function blend(a: Uint8Array, b: Uint8Array, share: number): Uint8Array {
  return Uint8Array.from(a, (v, i) => Math.round(v * (1 - share) + b[i] * share));
}

/** Samples every STEP s: each stretch holds its picture for `seconds`, fades of 2 samples. */
function timeline(stretches: { cells: Uint8Array; seconds: number }[]): SlideSample[] {
  const samples: SlideSample[] = [];
  stretches.forEach((stretch, i) => {
    if (i > 0) {
      const before = stretches[i - 1].cells;
      for (const share of [1 / 3, 2 / 3]) {
        samples.push({ time: samples.length * STEP, cells: blend(before, stretch.cells, share) });
      }
    }
    for (let k = 0; k < stretch.seconds / STEP; k++) {
      samples.push({ time: samples.length * STEP, cells: stretch.cells });
    }
  });
  return samples;
}

const choice = (samples: SlideSample[], count?: number) => ({
  grid: GRID,
  step: STEP,
  rangeEnd: samples.length * STEP,
  ...(count !== undefined ? { count } : {}),
});

describe("slides rule", () => {
  it("does not count a pointer-sized patch, and counts a line of text", () => {
    const slide = page(100, [4]);
    expect(pictureDistance(slide, withPointer(slide, 10, 12), GRID)).toBe(0);
    // A pointer that moved: two patches, still nothing.
    expect(pictureDistance(withPointer(slide, 3, 12), withPointer(slide, 20, 14), GRID)).toBe(0);
    // A new line of text, 24 cells wide: counted.
    expect(pictureDistance(slide, page(100, [4, 9]), GRID)).toBeCloseTo(24 / 576, 6);
    // Noise at or under CELL_DELTA is not a change.
    expect(pictureDistance(page(100), page(100 + CELL_DELTA), GRID)).toBe(0);
    expect(pictureDistance(page(100), page(101 + CELL_DELTA), GRID)).toBe(1);
  });

  it("finds one showing per settled stretch, none in a fade, and marks the repeat", () => {
    const a = page(40, [4]);
    const b = page(200, [4, 8]);
    const c = page(120, [5]);
    const samples = timeline([
      { cells: a, seconds: 3 },
      { cells: b, seconds: 4 },
      { cells: a, seconds: 2 },
      { cells: c, seconds: 5 },
    ]);
    const slides = findSlides(samples, choice(samples));
    expect(slides).toHaveLength(4);
    expect(slides.map((s) => s.repeatOf)).toEqual([null, null, 0, null]);
    // Stretches start at 0, 3.5, 8 and 10.5 s (fades of 0.5 s between).
    expect(slides.map((s) => s.start)).toEqual([0, 3.5, 8, 10.5]);
    expect(slides.map((s) => s.end)).toEqual([3, 7.5, 10, 15.5]);
    for (const s of slides) {
      expect(s.time).toBeGreaterThan(s.start);
      expect(s.time).toBeLessThan(s.end);
    }
  });

  it("keeps one showing when a pointer moves over the slide", () => {
    const slide = page(90, [4, 6]);
    const samples: SlideSample[] = Array.from({ length: 24 }, (_, k) => ({
      time: k * STEP,
      cells: withPointer(slide, 2 + k, 10 + (k % 3)),
    }));
    const slides = findSlides(samples, choice(samples));
    expect(slides).toHaveLength(1);
    expect([slides[0].start, slides[0].end]).toEqual([0, 6]);
  });

  it("drops a stretch shorter than a second", () => {
    const samples = timeline([
      { cells: page(40), seconds: 3 },
      { cells: page(200), seconds: 0.5 },
      { cells: page(120), seconds: 3 },
    ]);
    expect(findSlides(samples, choice(samples)).map((s) => s.cells[0])).toEqual([40, 120]);
  });

  it("count keeps the most distinct: the repeat goes first, then the later of the closest pair", () => {
    const a = page(40, [4]);
    const b = page(200, [4]);
    const c1 = page(120, [4]);
    const c2 = page(120, [4, 9]);
    const samples = timeline([
      { cells: a, seconds: 3 },
      { cells: b, seconds: 3 },
      { cells: c1, seconds: 3 },
      { cells: c2, seconds: 3 },
      { cells: a, seconds: 3 },
    ]);
    const levels = (count?: number) =>
      findSlides(samples, choice(samples, count)).map((s) => [s.cells[0], s.cells[9 * 32 + 5]]);
    expect(levels()).toHaveLength(5);
    expect(levels(4)).toEqual([
      [40, 40],
      [200, 200],
      [120, 120],
      [120, 255],
    ]);
    expect(levels(3)).toEqual([
      [40, 40],
      [200, 200],
      [120, 120],
    ]);
  });

  it("mixes in the text: agreeing text joins near pictures, disagreeing text splits same ones", () => {
    const showings = [
      { nearOf: [] },
      { nearOf: [{ showing: 0, distance: 0.03 }] },
      { nearOf: [{ showing: 0, distance: 0 }] },
      { nearOf: [{ showing: 0, distance: 0 }] },
    ];
    expect(
      repeatsWithText(showings, ["Quarterly results", "quarterly results!", "Roadmap 2027", null]),
    ).toEqual([null, 0, null, 0]);
    // Without text, the picture alone decides: only the same pictures repeat.
    expect(repeatsWithText(showings, [null, null, null, null])).toEqual([null, null, 0, 0]);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(textSimilarity("ALPHA", "alpha")).toBe(1);
  });
});
