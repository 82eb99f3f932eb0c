// The moving preview (issue 39) on real ffmpeg: a 4 s WebP at 10 fps has 40 pictures and loops,
// each the source's frame on screen at start + k/10 (read from the number painted in it);
// a GIF's frames are counted by ffprobe; the width is as asked; a 10 s 640 px preview of a
// grainy 720p video stays under the bound, and one made to fit a smaller bound shrinks; an HDR
// source's preview has the frames' SDR colour; a start past the end fails the job before any
// decoding; without a start the preview begins in the clip's best stretch.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { makePreview, previewSize } from "../../extractor/animated/preview.ts";
import { probeMedia } from "../../extractor/ffmpeg/probe.ts";
import { ANIMATED_LIMITS } from "../../schema/api.ts";
import type { AnimatedOptions, ExtractResult } from "../../schema/messages.ts";
import { qualityClip, stretchAt } from "../support/quality-clip.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import { frameBytes, meanAbsoluteDifference, runJob } from "./helpers.ts";

const run = promisify(execFile);
const SOURCE_FPS = 24;

function animated(partial: Partial<AnimatedOptions>): AnimatedOptions {
  return { duration: 3, fps: 10, width: 480, format: "webp", ...partial };
}

async function previewOf(result: { directory: string; outcome: { animated?: unknown } }) {
  const made = result.outcome.animated as NonNullable<ExtractResult["animated"]>;
  expect(made).toBeTruthy();
  const bytes = await readFile(join(result.directory, made.key));
  expect(bytes.length).toBe(made.bytes);
  return { made, bytes };
}

/** The animation's pictures as RGB, one by one, with sharp (libwebp's and libnsgif's demux). */
async function pagesOf(bytes: Buffer) {
  const meta = await sharp(bytes, { animated: true }).metadata();
  const pages = [];
  for (let page = 0; page < (meta.pages ?? 1); page++) {
    pages.push(await sharp(bytes, { page }).removeAlpha().png().toBuffer());
  }
  return { meta, pages };
}

/** An animated WebP's ANMF chunks (its frames) and the ANIM chunk's loop count, from the RIFF. */
function webpChunks(bytes: Buffer): { frames: number; loops: number | null } {
  expect(bytes.subarray(0, 4).toString("latin1")).toBe("RIFF");
  expect(bytes.subarray(8, 12).toString("latin1")).toBe("WEBP");
  let frames = 0;
  let loops: number | null = null;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const name = bytes.subarray(at, at + 4).toString("latin1");
    const size = bytes.readUInt32LE(at + 4);
    if (name === "ANMF") frames++;
    if (name === "ANIM") loops = bytes.readUInt16LE(at + 8 + 4);
    at += 8 + size + (size % 2);
  }
  return { frames, loops };
}

const onScreen = (t: number) => Math.floor(t * SOURCE_FPS + 1e-9);

describe("animated preview", () => {
  it("a 4 s WebP at 10 fps: 40 pictures, looping, as wide as asked, each the frame at its time", async () => {
    const video = await makeTestVideo({
      width: 640,
      height: 360,
      fps: SOURCE_FPS,
      durationSeconds: 12,
      gop: 48,
    });
    const start = 1.03;
    const result = await runJob(video, {
      mode: "count",
      count: 1,
      animated: animated({ start, duration: 4, fps: 10, width: 320 }),
    });
    expect(result.outcome.status).toBe("completed");
    const { made, bytes } = await previewOf(result);
    expect(made).toMatchObject({ frames: 40, width: 320, height: 180, format: "webp", start });
    expect(made.duration).toBe(4);
    expect(webpChunks(bytes)).toEqual({ frames: 40, loops: 0 });
    const { meta, pages } = await pagesOf(bytes);
    expect(meta).toMatchObject({ format: "webp", pages: 40, loop: 0, width: 320, pageHeight: 180 });
    // 100 ms each (libwebp rounds each to the millisecond on its own clock), 4 s in all.
    for (const delay of meta.delay ?? []) expect(Math.abs(delay - 100)).toBeLessThanOrEqual(1);
    const total = (meta.delay ?? []).reduce((sum, d) => sum + d, 0);
    expect(Math.abs(total - 4000)).toBeLessThanOrEqual(2);
    const numbers = await Promise.all(pages.map(async (p) => (await readImagePattern(p)).number));
    expect(numbers).toEqual(pages.map((_, k) => onScreen(start + k / 10)));
  });

  it("a GIF with its own palette: ffprobe counts fps × duration frames; loops; each frame exact", async () => {
    const video = await makeTestVideo({
      width: 640,
      height: 360,
      fps: SOURCE_FPS,
      durationSeconds: 12,
      gop: 48,
    });
    const start = 5.27;
    const result = await runJob(video, {
      mode: "timestamps",
      timestamps: [1],
      animated: animated({ start, duration: 2, fps: 15, width: 640, format: "gif" }),
    });
    expect(result.outcome.status).toBe("completed");
    const { made, bytes } = await previewOf(result);
    expect(made).toMatchObject({ frames: 30, width: 640, height: 360, format: "gif" });
    const path = join(result.directory, made.key);
    const { stdout } = await run("ffprobe", [
      "-v",
      "error",
      "-count_frames",
      "-show_entries",
      "stream=nb_read_frames,width,codec_name",
      "-of",
      "csv=p=0",
      path,
    ]);
    expect(stdout.trim()).toBe("gif,640,30");
    const { meta, pages } = await pagesOf(bytes);
    expect(meta).toMatchObject({ format: "gif", pages: 30, loop: 0 });
    const numbers = await Promise.all(pages.map(async (p) => (await readImagePattern(p)).number));
    expect(numbers).toEqual(pages.map((_, k) => onScreen(start + k / 15)));
  });

  it("a 10 s 640 px preview of grainy 720p stays under the bound; a smaller bound shrinks it", async () => {
    // At the preview's own 15 fps every source frame is a picture of it, with grain of its own
    // as at 30 fps (the noise is new in every frame): the same worst case for the bound, for
    // half the decoding (a grainy 720p frame is most of this test's CPU; decision 0296).
    const video = await makeTestVideo({
      width: 1280,
      height: 720,
      fps: 15,
      durationSeconds: 12,
      grain: true,
    });
    const result = await runJob(video, {
      mode: "count",
      count: 1,
      animated: animated({ start: 1, duration: 10, fps: 15, width: 640 }),
    });
    expect(result.outcome.status).toBe("completed");
    const { made } = await previewOf(result);
    expect(made).toMatchObject({ frames: 150, width: 640, height: 360 });
    expect(made.bytes).toBeLessThan(ANIMATED_LIMITS.max_bytes);

    const probe = await probeMedia(video);
    const v = probe.video;
    if (!v) throw new Error("no video");
    const bound = Math.floor(made.bytes / 2);
    const small = await makePreview(
      {
        input: video,
        streamIndex: v.streamIndex,
        startTime: v.startTime,
        timeBase: v.timeBase,
        times: { start: 1, frames: 150, fps: 15 },
        picture: {
          hdr: null,
          rotation: 0,
          ...previewSize(640, { width: 1280, height: 720 }),
          fallbackMatrix: "bt709",
        },
        format: "webp",
      },
      undefined,
      bound,
    );
    expect(small.bytes.length).toBeLessThanOrEqual(bound);
    expect(small.width).toBeLessThan(640);
    expect((await sharp(small.bytes, { animated: true }).metadata()).pages).toBe(150);
  });

  it("an HDR source's preview has the frames' SDR colour", async () => {
    const video = await makeTestVideo({ hdr: "pq", durationSeconds: 2 });
    const t = 1.02;
    const result = await runJob(video, {
      mode: "timestamps",
      timestamps: [t],
      format: "png",
      animated: animated({ start: t, duration: 0.1, fps: 10, width: 320 }),
    });
    expect(result.outcome.status).toBe("completed");
    const { made, bytes } = await previewOf(result);
    expect(made.frames).toBe(1);
    const frame = await sharp(await frameBytes(result, 1))
      .removeAlpha()
      .raw()
      .toBuffer();
    const page = await sharp(bytes, { page: 0 }).removeAlpha().raw().toBuffer();
    // Lossy WebP of the same SDR picture: close. Untouched PQ would be grey and washed out.
    expect(meanAbsoluteDifference(page, frame)).toBeLessThan(6);
  });

  it("a start past the end fails the job before decoding anything", async () => {
    const video = await makeTestVideo({ fps: SOURCE_FPS, durationSeconds: 2 });
    const result = await runJob(video, {
      mode: "count",
      count: 3,
      animated: animated({ start: 5 }),
    });
    expect(result.outcome.status).toBe("failed");
    expect(result.outcome.error?.name).toBe("ExtractionFailed");
    expect(result.outcome.error?.userMessage).toMatch(/preview starts at 5 s/);
    expect(result.outcome.frames).toEqual([]);
  });

  it("without a start, the preview begins in the best stretch of the job's range", async () => {
    const clip = await qualityClip();
    const result = await runJob(clip, {
      mode: "count",
      count: 2,
      animated: animated({ duration: 1, fps: 5, width: 320 }),
    });
    expect(result.outcome.status).toBe("completed");
    const { made } = await previewOf(result);
    expect(stretchAt(made.start)).toBe("crisp");
    expect(stretchAt(made.start + made.duration - 0.2)).toBe("crisp");
    const best = await runJob(clip, {
      mode: "best",
      animated: animated({ duration: 1, fps: 5, width: 320 }),
    });
    const fromBest = await previewOf(best);
    expect(stretchAt(fromBest.made.start)).toBe("crisp");
  });
});
