// Which stretches of a video are slides, from the low-rate grey samples of slides-scan.ts.
// Pure, so the rule is tested as data (decision 0300).
//
// Each sample is a grid of cell means (CELL_PIXELS square cells of the grey picture). Two
// pictures differ by the share of cells whose mean moved by more than CELL_DELTA, not counting
// changes that stay inside pointer-sized patches (a 4-connected group of changed cells whose
// bounding box is at most POINTER_CELLS on each side): a moving pointer changes two such
// patches, a new title or bullet line a wide one, a fade every cell.
// - A sample is still when it is the same picture (distance ≤ SAME_SHARE) as both neighbours;
//   a run of still samples that stay the same as the run's first is a settled stretch, and
//   one at least MIN_SLIDE_SECONDS long is a showing of a slide (a fade never is: its
//   samples differ from their neighbours).
// - Neighbouring stretches of the same picture are one showing. A showing spans the samples
//   around it that show the same picture; its frame is the middle of its longest still run.
// - A showing whose picture is the same as an earlier first showing's repeats it.
// - count keeps the most distinct: while there are too many, of the two closest showings the
//   later goes (a repeat before anything else, since it is 0 from its first showing).

/** Cells are this many pixels square in the scanned picture. */
export const CELL_PIXELS = 8;
/** A cell changed when its mean grey moved by more than this (0–255). */
export const CELL_DELTA = 10;
/** Changes inside patches at most this many cells wide and high are a pointer, not content. */
export const POINTER_CELLS = 4;
/** Two pictures are the same slide when at most this share of their cells changed. */
export const SAME_SHARE = 0.01;
/** A settled stretch shorter than this is not a slide (s). */
export const MIN_SLIDE_SECONDS = 1;
/** With text: pictures this close are the same slide when their text agrees (decision 0300). */
export const NEAR_SHARE = 0.05;

export interface SlideSample {
  /** The picture's own pts, seconds from the video's first frame. */
  time: number;
  /** Mean grey of each cell, row by row. */
  cells: Uint8Array;
}

export interface SlideGrid {
  columns: number;
  rows: number;
}

export interface SlideShowing {
  /** The settled moment delivered for it (a sample's own pts). */
  time: number;
  /** The first sampled moment showing it, and when it had gone (or the range's end). */
  start: number;
  end: number;
  /** Position of the showing it repeats, in the returned list (0-based). */
  repeatOf: number | null;
  /** Earlier first showings whose picture is within NEAR_SHARE, closest first (for text). */
  nearOf: { showing: number; distance: number }[];
  cells: Uint8Array;
}

/** Share of cells changed between two pictures, leaving out pointer-sized patches. */
export function pictureDistance(a: Uint8Array, b: Uint8Array, grid: SlideGrid): number {
  const { columns, rows } = grid;
  const count = columns * rows;
  const changed = new Uint8Array(count);
  for (let i = 0; i < count; i++) changed[i] = Math.abs(a[i] - b[i]) > CELL_DELTA ? 1 : 0;
  let counted = 0;
  const stack: number[] = [];
  for (let start = 0; start < count; start++) {
    if (changed[start] !== 1) continue;
    // One 4-connected patch: its size and bounding box.
    changed[start] = 2;
    stack.push(start);
    let size = 0;
    let left = columns;
    let right = -1;
    let top = rows;
    let bottom = -1;
    while (stack.length > 0) {
      const cell = stack.pop() as number;
      size++;
      const x = cell % columns;
      const y = (cell - x) / columns;
      left = Math.min(left, x);
      right = Math.max(right, x);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
      const around = [
        x > 0 ? cell - 1 : -1,
        x < columns - 1 ? cell + 1 : -1,
        y > 0 ? cell - columns : -1,
        y < rows - 1 ? cell + columns : -1,
      ];
      for (const next of around) {
        if (next >= 0 && changed[next] === 1) {
          changed[next] = 2;
          stack.push(next);
        }
      }
    }
    const pointerSized = right - left < POINTER_CELLS && bottom - top < POINTER_CELLS;
    if (!pointerSized) counted += size;
  }
  return count > 0 ? counted / count : 0;
}

interface Run {
  first: number;
  last: number;
}

export interface SlideChoice {
  grid: SlideGrid;
  /** Seconds between samples. */
  step: number;
  rangeEnd: number;
  /** Upper bound on the showings kept. */
  count?: number;
}

export function findSlides(samples: SlideSample[], choice: SlideChoice): SlideShowing[] {
  const { grid, step } = choice;
  const n = samples.length;
  const between = (i: number, j: number) =>
    pictureDistance(samples[i].cells, samples[j].cells, grid);
  const stepDistance: number[] = [];
  for (let k = 1; k < n; k++) stepDistance.push(between(k - 1, k));
  const still = (k: number) =>
    (k === 0 || stepDistance[k - 1] <= SAME_SHARE) &&
    (k === n - 1 || stepDistance[k] <= SAME_SHARE);

  const runs: Run[] = [];
  let open: Run | null = null;
  for (let k = 0; k < n; k++) {
    if (still(k) && open && between(open.first, k) <= SAME_SHARE) {
      open.last = k;
      continue;
    }
    if (open) runs.push(open);
    open = still(k) ? { first: k, last: k } : null;
  }
  if (open) runs.push(open);
  const long = runs.filter(
    (r) => samples[r.last].time - samples[r.first].time + step >= MIN_SLIDE_SECONDS,
  );

  // Neighbouring stretches of one picture (a pause in the middle, a larger wobble) are one.
  const merged: Run[][] = [];
  for (const run of long) {
    const previous = merged.at(-1);
    if (previous && between(middleOf(longest(previous)), middleOf(run)) <= SAME_SHARE) {
      previous.push(run);
    } else {
      merged.push([run]);
    }
  }

  let showings = merged.map((group, i) => {
    const chosen = middleOf(longest(group));
    let first = group[0].first;
    let last = group[group.length - 1].last;
    const floor = i > 0 ? (merged[i - 1].at(-1)?.last ?? -1) : -1;
    const ceiling = i + 1 < merged.length ? merged[i + 1][0].first : n;
    while (first - 1 > floor && between(first - 1, chosen) <= SAME_SHARE) first--;
    while (last + 1 < ceiling && between(last + 1, chosen) <= SAME_SHARE) last++;
    return {
      time: samples[chosen].time,
      start: samples[first].time,
      end: last + 1 < n ? samples[last + 1].time : choice.rangeEnd,
      repeatOf: null as number | null,
      nearOf: [] as SlideShowing["nearOf"],
      cells: samples[chosen].cells,
    };
  });

  if (choice.count !== undefined) showings = mostDistinct(showings, choice.count, grid);
  return markRepeats(showings, grid);
}

/**
 * Drops, while too many, the later of the two closest showings. Each showing keeps its nearest
 * earlier one; only the showings whose nearest was dropped look again (about n²/2 distances).
 */
function mostDistinct(showings: SlideShowing[], count: number, grid: SlideGrid): SlideShowing[] {
  const n = showings.length;
  const kept = new Array<boolean>(n).fill(true);
  const nearest = new Array<{ distance: number; of: number }>(n);
  const lookBack = (j: number) => {
    nearest[j] = { distance: Number.POSITIVE_INFINITY, of: -1 };
    for (let i = 0; i < j; i++) {
      if (!kept[i]) continue;
      const distance = pictureDistance(showings[i].cells, showings[j].cells, grid);
      if (distance < nearest[j].distance) nearest[j] = { distance, of: i };
    }
  };
  for (let j = 0; j < n; j++) lookBack(j);
  for (let left = n; left > Math.max(0, count); left--) {
    let drop = -1;
    for (let j = n - 1; j >= 0; j--) {
      if (kept[j] && (drop < 0 || nearest[j].distance < nearest[drop].distance)) drop = j;
    }
    kept[drop] = false;
    for (let k = drop + 1; k < n; k++) if (kept[k] && nearest[k].of === drop) lookBack(k);
  }
  return showings.filter((_, i) => kept[i]);
}

/** repeat_of by picture, and each showing's near earlier first showings for the text check. */
function markRepeats(showings: SlideShowing[], grid: SlideGrid): SlideShowing[] {
  const out = showings.map((s) => ({
    ...s,
    repeatOf: null as number | null,
    nearOf: [] as SlideShowing["nearOf"],
  }));
  out.forEach((showing, j) => {
    for (let i = 0; i < j; i++) {
      if (out[i].repeatOf !== null) continue;
      const distance = pictureDistance(out[i].cells, showing.cells, grid);
      if (distance <= NEAR_SHARE) showing.nearOf.push({ showing: i, distance });
    }
    showing.nearOf.sort((a, b) => a.distance - b.distance || a.showing - b.showing);
    // The earliest first showing of the same picture.
    showing.repeatOf = showing.nearOf
      .filter((m) => m.distance <= SAME_SHARE)
      .reduce((a, m) => (a === null || m.showing < a ? m.showing : a), null as number | null);
  });
  return out;
}

/** Words' text as compared: lower case, runs of space as one, no punctuation. */
export function comparableText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** 1 − edit distance / longer length: 1 for equal texts, 0 for nothing in common. */
export function textSimilarity(a: string, b: string): number {
  const x = comparableText(a);
  const y = comparableText(b);
  if (x.length === 0 && y.length === 0) return 1;
  return 1 - editDistance(x, y) / Math.max(x.length, y.length);
}

export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}

/** Text that agrees this much is the same slide's (with a picture within NEAR_SHARE). */
export const SAME_TEXT = 0.9;
/** A picture-same repeat whose text agrees less than this is a different slide. */
export const DIFFERENT_TEXT = 0.6;

/**
 * The mix with text (decision 0300): a showing repeats the earliest near first showing whose
 * text agrees — within SAME_SHARE unless the texts disagree (below DIFFERENT_TEXT), or within
 * NEAR_SHARE when both have text and it agrees (SAME_TEXT). `texts[i]` is showing i's text,
 * null when it was not read.
 */
export function repeatsWithText(
  showings: Pick<SlideShowing, "nearOf">[],
  texts: (string | null)[],
): (number | null)[] {
  const repeatOf: (number | null)[] = [];
  showings.forEach((showing, j) => {
    const mine = texts[j];
    const match = showing.nearOf
      .filter((m) => repeatOf[m.showing] === null)
      .filter((m) => {
        const theirs = texts[m.showing];
        if (mine === null || theirs === null) return m.distance <= SAME_SHARE;
        const agree = textSimilarity(mine, theirs);
        if (m.distance <= SAME_SHARE) return agree >= DIFFERENT_TEXT;
        return comparableText(mine).length > 0 && agree >= SAME_TEXT;
      })
      .reduce((a, m) => (a === null || m.showing < a ? m.showing : a), null as number | null);
    repeatOf.push(match);
  });
  return repeatOf;
}

function longest(group: Run[]): Run {
  return group.reduce((a, r) => (r.last - r.first > a.last - a.first ? r : a));
}

function middleOf(run: Run): number {
  return Math.floor((run.first + run.last) / 2);
}
