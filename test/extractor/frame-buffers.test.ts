// Picture buffers kept from one job for the next (extractor/decode.ts FrameBufferPool and its
// spare buffers): a job after another of the same picture size allocates none; a buffer given
// back twice is handed out once; a delivered frame's buffer is given back once, however often
// its release is called; jobs of several sizes taking turns keep each size's buffers (decision
// 0279); a job above 1440p starts with none of another size kept.
import { afterEach, describe, expect, it, vi } from "vitest";
import { DecodeRun, FrameBufferPool } from "../../extractor/decode.ts";
import { probeMedia } from "../../extractor/ffmpeg/probe.ts";
import { makeTestVideo } from "../support/videos.ts";

const SMALL = { width: 320, height: 180 };
const OTHER = { width: 640, height: 360 };
// Above 1440p (decode.ts largePicture).
const LARGE = { width: 2560, height: 1442 };

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

  it("take back a delivered frame's buffer once, so a stale release cannot hand out one in use", async () => {
    const video = await makeTestVideo({ ...SMALL, fps: 10, durationSeconds: 2 });
    const probe = await probeMedia(video);
    if (!probe.video) throw new Error("no video");
    const pool = new FrameBufferPool(SMALL, 3);
    const context = {
      input: video,
      video: probe.video,
      durationSeconds: 2,
      picture: { hdr: null, rotation: 0 as const, ...SMALL, fallbackMatrix: null },
      signal: new AbortController().signal,
      buffers: pool,
    };
    const run = new DecodeRun(context, { seekSeconds: null, times: [0.5] });
    const frames: { pixels: Buffer; release(): void }[] = [];
    for await (const frame of run.frames()) frames.push(frame);
    expect(frames).toHaveLength(1);
    const [frame] = frames;
    frame.release();
    // The buffer goes to the next taker, who is still using it when the old frame is released
    // again: it must not go back to the pool and be handed out a second time.
    const inUse = pool.take();
    expect(inUse).toBe(frame.pixels);
    frame.release();
    expect(pool.take()).not.toBe(inUse);
  });

  it("are kept for several sizes at once: jobs of two sizes taking turns allocate none after their first", () => {
    const small = job(SMALL, 4);
    const other = job(OTHER, 2);
    expect(other.every((buffer) => buffer.length === OTHER.width * OTHER.height * 3)).toBe(true);
    const allocate = vi.spyOn(Buffer, "allocUnsafe");
    const smallAgain = job(SMALL, 4);
    const otherAgain = job(OTHER, 2);
    expect(allocate).not.toHaveBeenCalled();
    expect(new Set([...small, ...smallAgain]).size).toBe(4);
    expect(new Set([...other, ...otherAgain]).size).toBe(2);
  });

  it("give way to a picture above 1440p, which starts with none of another size kept", () => {
    const small = job(SMALL, 4);
    const large = job(LARGE, 1);
    expect(large[0].length).toBe(LARGE.width * LARGE.height * 3);
    // The small pictures were dropped when the large job took its first buffer.
    const smallAgain = job(SMALL, 4);
    expect(smallAgain.some((buffer) => small.includes(buffer))).toBe(false);
    // And a smaller size kept drops the large one's.
    const largeAgain = job(LARGE, 1);
    expect(largeAgain[0] === large[0]).toBe(false);
  });
});
