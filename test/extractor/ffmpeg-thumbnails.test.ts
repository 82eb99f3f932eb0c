// Thumbnails scaled by ffmpeg beside the frames (decision 0283; ffmpeg/args.ts pictureChain,
// decode.ts): each delivered frame's pixels are the same bytes as a run without thumbnails
// (frames stay exact), and its thumbnail is that same picture at the thumbnail's size, in one
// run and in a batch of several inputs (whose graph labels must not clash), and upright for a
// rotated video. The expected pictures come from sharp resizing the delivered frame, never from
// the code under test.
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import {
  BatchRun,
  type DecodeContext,
  type DecodedFrame,
  DecodeRun,
  decodeBatch,
  FrameBufferPool,
} from "../../extractor/decode.ts";
import { probeMedia } from "../../extractor/ffmpeg/probe.ts";
import { encodeThumbnail, thumbnailSize } from "../../extractor/output/thumbnails.ts";
import { pictureSteps } from "../../extractor/picture-steps.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import { cfrFrameAt, meanAbsoluteDifference } from "./helpers.ts";

interface Delivered {
  pixels: Buffer;
  thumbnail: Buffer | null;
  pts: number | null;
}

async function contextFor(video: string, thumbnails: boolean): Promise<DecodeContext> {
  const probe = await probeMedia(video);
  if (!probe.video) throw new Error("no video");
  const size = { width: probe.video.displayWidth, height: probe.video.displayHeight };
  const picture = pictureSteps(probe.video, size, { thumbnails });
  return {
    input: video,
    video: probe.video,
    durationSeconds: probe.video.durationSeconds ?? 0,
    picture,
    signal: new AbortController().signal,
    buffers: new FrameBufferPool(picture, 3),
  };
}

/** Copies what each frame holds (pixels, thumbnail cut from its rows) before releasing it. */
async function collect(frames: AsyncIterable<DecodedFrame>): Promise<Delivered[]> {
  const out: Delivered[] = [];
  for await (const frame of frames) {
    const rows = frame.thumbnail;
    out.push({
      pixels: Buffer.from(frame.pixels),
      thumbnail: rows
        ? await sharp(rows.pixels, {
            raw: { width: rows.rowWidth, height: rows.height, channels: 3 },
          })
            .extract({ left: 0, top: 0, width: rows.width, height: rows.height })
            .raw()
            .toBuffer()
        : null,
      pts: frame.pts,
    });
    frame.release();
  }
  return out;
}

/** The frame scaled to its thumbnail's size by sharp: what the thumbnail should look like. */
async function expectedThumbnail(pixels: Buffer, width: number, height: number): Promise<Buffer> {
  const size = thumbnailSize(width, height);
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .resize({ ...size, fit: "fill", kernel: "linear" })
    .raw()
    .toBuffer();
}

/** Both runs delivered the same frames; the thumbnails are those frames, smaller. */
async function expectSameFramesWithThumbnails(
  context: DecodeContext,
  plain: Delivered[],
  withThumbs: Delivered[],
  count: number,
) {
  const { width, height } = context.picture;
  expect(plain).toHaveLength(count);
  expect(withThumbs).toHaveLength(count);
  for (const [i, frame] of withThumbs.entries()) {
    expect(plain[i].thumbnail).toBeNull();
    expect(frame.pts).toBe(plain[i].pts);
    expect(frame.pixels.length).toBe(width * height * 3);
    expect(frame.pixels.equals(plain[i].pixels)).toBe(true);
    const thumb = frame.thumbnail as Buffer;
    expect(thumb).not.toBeNull();
    const size = thumbnailSize(width, height);
    expect(thumb.length).toBe(size.width * size.height * 3);
    const expected = await expectedThumbnail(frame.pixels, width, height);
    expect(meanAbsoluteDifference(thumb, expected)).toBeLessThan(4);
    // And not any picture of the video: another frame's thumbnail differs from it.
    const other = withThumbs[(i + 1) % withThumbs.length].pixels;
    const otherThumb = await expectedThumbnail(other, width, height);
    expect(meanAbsoluteDifference(thumb, otherThumb)).toBeGreaterThan(
      meanAbsoluteDifference(thumb, expected),
    );
  }
}

describe("thumbnails scaled by ffmpeg", () => {
  it("one run: the frames are the same bytes as without them, each thumbnail that frame at 320 px", async () => {
    const fps = 30;
    const video = await makeTestVideo({ width: 1280, height: 720, fps, durationSeconds: 4 });
    const times = [0.5, 1.25, 2.9];
    const plainContext = await contextFor(video, false);
    const context = await contextFor(video, true);
    expect(context.picture.thumbnail).toEqual({ width: 320, height: 180 });
    expect(plainContext.picture.thumbnail).toBeNull();
    const plain = await collect(new DecodeRun(plainContext, { seekSeconds: null, times }).frames());
    const withThumbs = await collect(new DecodeRun(context, { seekSeconds: null, times }).frames());
    await expectSameFramesWithThumbnails(context, plain, withThumbs, times.length);
    // The frames are the ones on screen at their times.
    for (const [i, frame] of withThumbs.entries()) {
      const png = await sharp(frame.pixels, { raw: { width: 1280, height: 720, channels: 3 } })
        .png()
        .toBuffer();
      expect((await readImagePattern(png)).number).toBe(cfrFrameAt(times[i], fps));
    }
  });

  it("a batch of several inputs: each part's frames and thumbnails, as one run would give them", async () => {
    const video = await makeTestVideo({
      width: 640,
      height: 360,
      fps: 30,
      gop: 30,
      durationSeconds: 6,
    });
    const groups = [
      { seekSeconds: 1, keyframeSeconds: 1, times: [1.2] },
      { seekSeconds: 3, keyframeSeconds: 3, times: [3.4, 3.7] },
      { seekSeconds: 5, keyframeSeconds: 5, times: [5.1] },
    ];
    const plainContext = await contextFor(video, false);
    const context = await contextFor(video, true);
    const plain = await collect(decodeBatch(plainContext, new BatchRun(plainContext, groups)));
    const batch = new BatchRun(context, groups);
    const withThumbs = await collect(decodeBatch(context, batch));
    // All from the one process: no part fell back to a run of its own.
    expect(batch.delivered).toBe(4);
    await expectSameFramesWithThumbnails(context, plain, withThumbs, 4);
  });

  it("a rotated video: the thumbnail is the upright frame's shape and picture", async () => {
    const video = await makeTestVideo({
      width: 360,
      height: 640,
      rotation: 90,
      durationSeconds: 2,
    });
    const times = [0.4, 1.6];
    const plainContext = await contextFor(video, false);
    const context = await contextFor(video, true);
    expect(context.picture.rotation).toBe(90);
    expect(context.picture.thumbnail).toEqual({ width: 320, height: 569 });
    const plain = await collect(new DecodeRun(plainContext, { seekSeconds: null, times }).frames());
    const withThumbs = await collect(new DecodeRun(context, { seekSeconds: null, times }).frames());
    await expectSameFramesWithThumbnails(context, plain, withThumbs, times.length);
  });

  it("a frame no wider than a thumbnail gets none from ffmpeg (the frame is its own picture)", async () => {
    const video = await makeTestVideo({ width: 320, height: 180 });
    const context = await contextFor(video, true);
    expect(context.picture.thumbnail).toBeNull();
    expect(context.buffers.frameBytes).toBe(320 * 180 * 3);
  });

  it("above 1440p, and without a sink that keeps thumbnails, ffmpeg makes none", async () => {
    const probe = await probeMedia(await makeTestVideo({ width: 320, height: 180 }));
    if (!probe.video) throw new Error("no video");
    const steps = (width: number, height: number, thumbnails: boolean) =>
      pictureSteps(
        probe.video as NonNullable<typeof probe.video>,
        { width, height },
        { thumbnails },
      ).thumbnail;
    expect(steps(2560, 1440, true)).toEqual({ width: 320, height: 180 });
    expect(steps(3840, 2160, true)).toBeNull();
    expect(steps(1920, 1080, false)).toBeNull();
  });

  it("encodeThumbnail reads only the thumbnail's own pixels of its rows", async () => {
    // 400-pixel rows: a 320×2 red picture, then 80 blue pixels of padding on each row.
    const rows = Buffer.alloc(400 * 2 * 3);
    for (let p = 0; p < 400 * 2; p++) rows.set(p % 400 < 320 ? [255, 0, 0] : [0, 0, 255], p * 3);
    const jpeg = await encodeThumbnail({ pixels: rows, rowWidth: 400, width: 320, height: 2 });
    const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([320, 2]);
    const blue = data.filter((_, i) => i % 3 === 2).reduce((a, b) => Math.max(a, b), 0);
    expect(blue).toBeLessThan(40);
  });
});
