// Wanted times as "slots": slot k is the k-th wanted time (ascending). A decoded frame with
// presentation time p maps to slotsBefore(p) = how many wanted times lie strictly before p; the
// picture for slot k is the last frame whose value is ≤ k (see ffmpeg/args.ts). The same maths
// runs in ffmpeg (as a setpts expression) and here (to name each delivered frame's own pts),
// written so both evaluate the same floating-point operations in the same order.

/** A frame at p counts as on screen at t when p ≤ t + this (absorbs float noise, not frames). */
export const PTS_TOLERANCE_SECONDS = 1e-6;

/** Longest explicit list turned into one expression (timestamps mode allows 500). */
export const MAX_LISTED_SLOTS = 2000;

export type SlotTimes =
  /** first + k·step for k in [0, count): interval and count modes, whatever their length. */
  | { kind: "grid"; first: number; step: number; count: number }
  /** Any ascending list. */
  | { kind: "list"; times: number[] };

export function slotCount(slots: SlotTimes): number {
  return slots.kind === "grid" ? slots.count : slots.times.length;
}

export function slotTime(slots: SlotTimes, k: number): number {
  return slots.kind === "grid" ? slots.first + k * slots.step : slots.times[k];
}

/** Evenly spaced times become a grid (a constant-size expression); others stay a list. */
export function toSlotTimes(ascendingTimes: number[]): SlotTimes {
  const n = ascendingTimes.length;
  if (n >= 3) {
    const first = ascendingTimes[0];
    const step = (ascendingTimes[n - 1] - first) / (n - 1);
    // Plan times are rounded to the microsecond, so an even grid is even to within half of one.
    const even = step > 0 && ascendingTimes.every((t, k) => Math.abs(first + k * step - t) <= 6e-7);
    if (even) return { kind: "grid", first, step, count: n };
  }
  if (n > MAX_LISTED_SLOTS) throw new Error(`too many uneven wanted times in one decode: ${n}`);
  return { kind: "list", times: ascendingTimes };
}

export function slotsBefore(slots: SlotTimes, p: number): number {
  if (slots.kind === "grid") {
    const k = Math.ceil((p - PTS_TOLERANCE_SECONDS - slots.first) / slots.step);
    return Math.min(Math.max(k, 0), slots.count);
  }
  let count = 0;
  for (const t of slots.times) if (t < p - PTS_TOLERANCE_SECONDS) count++;
  return count;
}

/**
 * slotsBefore for frame times asked in ascending order, by the same comparisons: a list's
 * count only grows, so the whole walk costs the frames plus the times, not their product.
 */
export function ascendingSlotsBefore(slots: SlotTimes): (p: number) => number {
  if (slots.kind === "grid") return (p) => slotsBefore(slots, p);
  const { times } = slots;
  let count = 0;
  return (p) => {
    while (count < times.length && times[count] < p - PTS_TOLERANCE_SECONDS) count++;
    return count;
  };
}

/** The same function as an ffmpeg expression of T (the frame's time in seconds). */
export function slotsBeforeExpression(slots: SlotTimes): string {
  const tol = literal(PTS_TOLERANCE_SECONDS);
  if (slots.kind === "grid") {
    return `clip(ceil((T-${tol}-${literal(slots.first)})/${literal(slots.step)}),0,${slots.count})`;
  }
  if (slots.times.length === 0) return "0";
  return balancedSum(slots.times.map((t) => `lt(${literal(t)},T-${tol})`));
}

// ffmpeg's expression parser gives up on a flat chain of ~150 terms; a balanced tree of sums
// stays a few levels deep for thousands.
function balancedSum(terms: string[]): string {
  if (terms.length === 1) return terms[0];
  const middle = terms.length >> 1;
  return `(${balancedSum(terms.slice(0, middle))}+${balancedSum(terms.slice(middle))})`;
}

// JS prints the shortest string that reads back as the same double, and ffmpeg parses numbers
// with strtod, so both sides compute with identical constants. Exponent forms such as 1e-7
// would be misread by ffmpeg's SI-suffix parser, so those use a fixed, longer notation.
function literal(x: number): string {
  let text = String(x);
  if (/e/i.test(text)) text = x.toFixed(20).replace(/0+$/, "");
  return x < 0 ? `(${text})` : text;
}
