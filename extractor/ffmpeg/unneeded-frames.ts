// Frames nobody asked for and nothing refers to are not decoded. In H.264 a picture whose
// slices carry nal_ref_idc 0 is never used to predict another, so leaving it out changes no
// other picture by a single bit (checked: every frame of a 120 s 1080p file decoded with and
// without them, identical checksums). Such pictures are common: x264's non-reference B-frames
// are about 40 % of a file's frames, and their decoding about as much of the CPU. A run that
// picks frames by time needs only, for each wanted time, the frame on screen then; every other
// non-reference picture is hidden from the decoder as its bytes pass through the relay: each of
// its slice NAL units gets an unspecified NAL type (30), which decoders skip. Sizes and offsets
// stay as they are, so the container, seeking and timestamps are untouched.
//
// ffmpeg reports such an access unit as it would a broken one ("no frame!"), which the decode
// run knows to expect (decode.ts) and which ffmpeg's error rate must not count
// (ffmpeg/args.ts errorRateArgs).
import type { SlotTimes } from "../slots.ts";
import { ascendingSlotsBefore, slotCount, slotsBefore } from "../slots.ts";
import type { SampleLayout } from "./mp4-index.ts";

const UNSPECIFIED_NAL_TYPE = 30;
const NON_IDR_SLICE = 1;

/** Indices of `values` in ascending order of value (no sort where they already are). */
function orderBy(values: readonly number[]): Uint32Array {
  const indices = Uint32Array.from(values.keys());
  const ascending = values.every((v, i) => i === 0 || values[i - 1] <= v);
  return ascending ? indices : indices.sort((a, b) => values[a] - values[b]);
}

/** A track's samples in file order and in presentation order, worked out once for a job. */
export class PictureIndex {
  readonly layout: SampleLayout;
  /** Sample indices in file order. */
  readonly byOffset: Uint32Array;
  /** Sample indices in presentation order. */
  private readonly byPts: Uint32Array;

  private constructor(layout: SampleLayout) {
    this.layout = layout;
    this.byOffset = orderBy(layout.offsets);
    this.byPts = orderBy(layout.pts);
  }

  /**
   * Only a track with pictures nothing refers to (B-frames) and frames only (no field
   * pictures, mp4-index.ts framesOnly); else null.
   */
  static of(layout: SampleLayout): PictureIndex | null {
    return layout.reordered ? PictureIndex.ofFrames(layout) : null;
  }

  /**
   * Any track of frames only (what a run reading only some stretches of the file needs to
   * know which frame is on screen when, ffmpeg/mp4-spans.ts); else null.
   */
  static ofFrames(layout: SampleLayout): PictureIndex | null {
    const usable = layout.progressive && layout.offsets.length > 0;
    return usable ? new PictureIndex(layout) : null;
  }

  /**
   * The samples a run picking the frames on screen at `slots` must decode besides reference
   * pictures: for each slot the frame the picking chooses, counted with the picking's own
   * arithmetic (slots.ts slotsBefore: the last frame whose count of slots before it is at most
   * the slot's), and the frame after it; and the first frame, which stands for slots before it.
   * Also, for each slot, the frame the index says is on screen then (its sample and its time):
   * what the run must deliver (decode.ts checks it).
   */
  onScreen(slots: SlotTimes): { keep: Set<number>; shownAt: number[]; shown: number[] } {
    const { pts } = this.layout;
    const order = this.byPts;
    const count = slotCount(slots);
    const keep = new Set<number>([order[0]]);
    const shownAt = new Array<number>(count).fill(pts[order[0]]);
    const shown = new Array<number>(count).fill(order[0]);
    // Frames before the last one with no slot before it are on screen for no slot: start there
    // (binary search: the count of slots before a frame grows with its time).
    let lo = 0;
    let hi = order.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (slotsBefore(slots, pts[order[mid]]) === 0) lo = mid;
      else hi = mid - 1;
    }
    const slotsBeforeFrame = ascendingSlotsBefore(slots);
    let before = slotsBeforeFrame(pts[order[lo]]);
    for (let p = lo; p < order.length && before < count; p++) {
      const next = p + 1 < order.length ? slotsBeforeFrame(pts[order[p + 1]]) : count;
      // Frame p is the one on screen for slots before..next-1.
      if (next > before) {
        keep.add(order[p]);
        if (p + 1 < order.length) keep.add(order[p + 1]);
        shownAt.fill(pts[order[p]], before, Math.min(next, count));
        shown.fill(order[p], before, Math.min(next, count));
      }
      before = next;
    }
    return { keep, shownAt, shown };
  }

  /**
   * What a run that picks the frames on screen at `slots` may leave out (`onScreen`: this
   * index's onScreen(slots), when the caller has it already).
   */
  forSlots(slots: SlotTimes, onScreen = this.onScreen(slots)): UnneededFrames {
    return new UnneededFrames(this, new Set(onScreen.keep), onScreen.shownAt);
  }
}

/**
 * One decode run's view of the file: which samples may be hidden, and where in each sample the
 * next NAL unit starts, learnt as bytes pass. A request that starts inside a sample continues
 * from what an earlier request learnt (ffmpeg reads through the relay's parts one after
 * another); where nothing was learnt the sample passes as it is, which costs only time.
 */
export class UnneededFrames {
  private readonly index: PictureIndex;
  /** Samples decoded even if nothing refers to them: the frames the run picks. */
  readonly keep: Set<number>;
  /** Sample → the offset of its next NAL length field not yet passed. */
  private readonly nextField = new Map<number, number>();
  /**
   * For each slot, the time (absolute s) of the frame on screen then by the index: the frame
   * the run must deliver. Where ffmpeg delivers another, the index is wrong about this file.
   */
  readonly shownAt: readonly number[];
  /** Slice NAL units hidden so far. */
  hidden = 0;

  constructor(index: PictureIndex, keep: Set<number>, shownAt: readonly number[]) {
    this.index = index;
    this.keep = keep;
    this.shownAt = shownAt;
  }

  /** A filter for one response's bytes, which start at `start` in the file. */
  stream(start: number): (chunk: Buffer) => Buffer {
    let position = start;
    // The bytes just before `position`: a length field may straddle two chunks.
    let tail = Buffer.alloc(0);
    const { lengthSize } = this.index.layout;
    return (chunk) => {
      const out = this.pass(position, chunk, tail);
      position += chunk.length;
      tail = Buffer.from(
        chunk.length >= lengthSize ? chunk.subarray(-lengthSize) : Buffer.concat([tail, chunk]),
      ).subarray(-lengthSize);
      return out;
    };
  }

  /** The first sample (in file order) that ends after `position`. */
  private firstEndingAfter(position: number): number {
    const { offsets, sizes } = this.index.layout;
    const { byOffset } = this.index;
    let lo = 0;
    let hi = byOffset.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const s = byOffset[mid];
      if (offsets[s] + sizes[s] <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private pass(base: number, chunk: Buffer, tail: Buffer): Buffer {
    const { offsets, sizes, lengthSize } = this.index.layout;
    const { byOffset } = this.index;
    const end = base + chunk.length;
    let out = chunk;
    const byteAt = (at: number): number =>
      (at >= base ? out[at - base] : tail[tail.length - (base - at)]) ?? 0;
    for (let k = this.firstEndingAfter(base); k < byOffset.length; k++) {
      const s = byOffset[k];
      const sampleStart = offsets[s];
      if (sampleStart >= end) break;
      if (this.keep.has(s)) continue;
      const sampleEnd = sampleStart + sizes[s];
      const learnt = sampleStart >= base ? sampleStart : this.nextField.get(s);
      // Inside a sample nothing was learnt about, or past its length field's start with no
      // bytes of it kept: let it pass.
      if (learnt === undefined || learnt < base - tail.length) continue;
      let field: number = learnt;
      while (field + lengthSize < sampleEnd) {
        const header = field + lengthSize;
        if (header >= end) break;
        let length = 0;
        for (let b = field; b < header; b++) length = length * 256 + byteAt(b);
        if (length === 0 || header + length > sampleEnd) {
          // Not NAL units as the index says: leave the rest of the sample alone.
          field = sampleEnd;
          break;
        }
        const nal = byteAt(header);
        if (header >= base && (nal & 0x1f) === NON_IDR_SLICE && (nal & 0x60) === 0) {
          if (out === chunk) out = Buffer.from(chunk);
          out[header - base] = (nal & 0xe0) | UNSPECIFIED_NAL_TYPE;
          this.hidden++;
        }
        field = header + length;
      }
      if (field + lengthSize < sampleEnd) this.nextField.set(s, field);
      else this.nextField.delete(s);
    }
    return out;
  }
}
