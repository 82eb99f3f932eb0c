// Follows the decoded frames' presentation times (from showinfo) to name, for each slot, the
// pts of the frame ffmpeg's fps filter delivers for it: the last frame with pts ≤ the slot's
// time, or the first frame for times before it. Raw frames and showinfo lines arrive on two
// pipes in either order, so a slot's pts is a promise that settles when it is known.
import type { SlotTimes } from "./slots.ts";
import { slotCount, slotsBefore } from "./slots.ts";

export class SlotTimeline {
  private readonly slots: SlotTimes;
  private readonly total: number;
  private readonly known: (number | null)[] = [];
  private readonly waiting = new Map<number, (pts: number | null) => void>();
  private lastPts: number | null = null;
  private firstPts: number | null = null;
  private finished = false;

  constructor(slots: SlotTimes) {
    this.slots = slots;
    this.total = slotCount(slots);
  }

  /** The pts of the first frame the decoder produced, or null before any. */
  get firstFramePts(): number | null {
    return this.firstPts;
  }

  get lastFramePts(): number | null {
    return this.lastPts;
  }

  /** A decoded frame, in presentation order, its time in absolute stream seconds. */
  observeFrame(pts: number): void {
    if (this.firstPts === null) this.firstPts = pts;
    const before = Math.min(slotsBefore(this.slots, pts), this.total);
    // Slots whose time precedes this frame are shown by the previous one (or, before the
    // first frame, by this one: fps repeats the first frame backwards).
    const shownBy = this.lastPts ?? pts;
    while (this.known.length < before) this.settle(this.known.length, shownBy);
    this.lastPts = pts;
  }

  /** End of decoding: slots still open are shown by the last frame (fps flushes them). */
  finish(): void {
    this.finished = true;
    while (this.known.length < this.total) this.settle(this.known.length, this.lastPts);
  }

  ptsOfSlot(slot: number): Promise<number | null> {
    if (slot < this.known.length) return Promise.resolve(this.known[slot]);
    if (this.finished) return Promise.resolve(null);
    return new Promise((resolve) => this.waiting.set(slot, resolve));
  }

  private settle(slot: number, pts: number | null): void {
    this.known.push(pts);
    const resolve = this.waiting.get(slot);
    if (resolve) {
      this.waiting.delete(slot);
      resolve(pts);
    }
  }
}
