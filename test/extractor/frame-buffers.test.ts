// Picture buffers kept from one job for the next (extractor/decode.ts FrameBufferPool and its
// spare buffers): a job after another of the same picture size allocates none; a buffer given
// back twice is handed out once; a job of another size starts with none kept.
import { afterEach, describe, expect, it, vi } from "vitest";
import { FrameBufferPool } from "../../extractor/decode.ts";

const SMALL = { width: 320, height: 180 };
const OTHER = { width: 640, height: 360 };

afterEach(() => {
  vi.restoreAllMocks();
});

/** A job's use of its pool: `n` pictures out at once, all given back, then the job ends. */
function job(size: { width: number; height: number }, n: number): Buffer[] {
  const pool = new FrameBufferPool(size, 3);
  const taken = Array.from({ length: n }, () => pool.take());
  for (const buffer of taken) pool.give(buffer);
  pool.retire();
  return taken;
}

describe("picture buffers across jobs", () => {
  it("are kept for the next job of the same size, which allocates none", () => {
    const first = job(SMALL, 6);
    const allocate = vi.spyOn(Buffer, "allocUnsafe");
    const second = job(SMALL, 6);
    expect(allocate).not.toHaveBeenCalled();
    expect(new Set([...first, ...second]).size).toBe(6);
  });

  it("hand out a buffer given back twice only once", () => {
    job(OTHER, 0);
    const pool = new FrameBufferPool(SMALL, 3);
    const buffer = pool.take();
    pool.give(buffer);
    pool.give(buffer);
    const [a, b] = [pool.take(), pool.take()];
    expect(a).not.toBe(b);
    pool.give(a);
    pool.give(b);
    pool.retire();
  });

  it("are dropped for a job of another size, and not handed back to the first size after", () => {
    const small = job(SMALL, 4);
    const other = job(OTHER, 2);
    expect(other.every((buffer) => buffer.length === OTHER.width * OTHER.height * 3)).toBe(true);
    const again = job(SMALL, 4);
    expect(again.some((buffer) => small.includes(buffer))).toBe(false);
  });
});
