// What the delivered pictures look like: upright, the right size, right colours, right format.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { makeTestVideo, readImagePattern, readPattern } from "../support/videos.ts";
import { frameBytes, makeLavfiClip, rgbPixels, runJob } from "./helpers.ts";

const run = promisify(execFile);

describe("display rotation", () => {
  it("the generator's rotated videos play upright in ffmpeg's own autorotate (oracle check)", async () => {
    const video = await makeTestVideo({ rotation: 90, durationSeconds: 1 });
    const { stdout } = await run(
      "ffmpeg",
      ["-v", "error", "-i", video, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
      { encoding: "buffer", maxBuffer: 1 << 24 },
    );
    expect(readPattern(stdout, 320, 180, 3)).toMatchObject({ upright: true, number: 0 });
  });

  for (const rotation of [90, 180, 270] as const) {
    it(`rotation ${rotation}°: delivered upright at the display size`, async () => {
      const video = await makeTestVideo({ rotation, durationSeconds: 1 });
      const job = await runJob(video, { mode: "timestamps", timestamps: [0.5] });
      expect(job.outcome.width).toBe(320);
      expect(job.outcome.height).toBe(180);
      const pattern = await readImagePattern(await frameBytes(job, 1));
      expect(pattern.info).toMatchObject({ width: 320, height: 180 });
      expect(pattern).toMatchObject({ upright: true, number: 15 });
    });
  }

  it("a portrait phone video (stored landscape, turned 90°) comes out portrait", async () => {
    const video = await makeTestVideo({
      rotation: 90,
      width: 360,
      height: 640,
      durationSeconds: 1,
    });
    const job = await runJob(video, { mode: "timestamps", timestamps: [0.5], resolution: 240 });
    const pattern = await readImagePattern(await frameBytes(job, 1));
    expect(pattern.info).toMatchObject({ width: 240, height: 427 });
    expect(pattern).toMatchObject({ upright: true, number: 15 });
    expect(job.outcome.delivered_resolution).toBe(240);
  });
});

describe("size", () => {
  it("resolution is the short side: 640×360 at 240 → 427×240", async () => {
    const video = await makeTestVideo({ width: 640, height: 360, durationSeconds: 1 });
    const job = await runJob(video, { mode: "count", count: 1, resolution: 240 });
    const pattern = await readImagePattern(await frameBytes(job, 1));
    expect(pattern.info).toMatchObject({ width: 427, height: 240 });
    expect(pattern.number).toBe(15);
    expect(job.outcome).toMatchObject({ requested_resolution: 240, delivered_resolution: 240 });
    expect(job.outcome.resolution_note).toBeNull();
  });

  it("never upscales: 640×360 asked at 1080 delivers 360p and says why", async () => {
    const video = await makeTestVideo({ width: 640, height: 360, durationSeconds: 1 });
    const job = await runJob(video, { mode: "count", count: 1, resolution: 1080 });
    const pattern = await readImagePattern(await frameBytes(job, 1));
    expect(pattern.info).toMatchObject({ width: 640, height: 360 });
    expect(job.outcome).toMatchObject({ requested_resolution: 1080, delivered_resolution: 360 });
    expect(job.outcome.resolution_note).toMatch(/360p.*1080p/);
  });

  it("a source between standard sizes gets the largest standard size it reaches", async () => {
    const video = await makeTestVideo({ width: 500, height: 300, durationSeconds: 1 });
    const job = await runJob(video, { mode: "count", count: 1, resolution: 720 });
    const pattern = await readImagePattern(await frameBytes(job, 1));
    expect(pattern.info).toMatchObject({ width: 400, height: 240 });
    expect(job.outcome.delivered_resolution).toBe(240);
    expect(pattern.number).toBe(15);
  });

  it("max_width shrinks further, keeping the aspect ratio", async () => {
    const video = await makeTestVideo({ width: 640, height: 360, durationSeconds: 1 });
    const job = await runJob(video, { mode: "count", count: 1, resolution: 360, max_width: 200 });
    const pattern = await readImagePattern(await frameBytes(job, 1));
    expect(pattern.info).toMatchObject({ width: 200, height: 113 });
    expect(pattern.number).toBe(15);
  });
});

describe("colour", () => {
  it("10-bit H.264 (High 10) decodes to clean 8-bit black and white", async () => {
    const video = await makeTestVideo({ pixelFormat: "yuv420p10le", durationSeconds: 1 });
    const job = await runJob(video, { mode: "count", count: 1, format: "png" });
    const pattern = await readImagePattern(await frameBytes(job, 1));
    expect(pattern.number).toBe(15);
    expect(pattern.cellMean(0)).toBeGreaterThan(245);
    expect(pattern.cellMean(3)).toBeLessThan(10);
  });

  // A flat colour converted to YCbCr with the matrix a size implies and stored untagged:
  // delivered, it must come back as the colour it was (measured: within 4 levels through
  // ffmpeg's own round trip; the other matrix puts it 10–20 levels off). Widescreen HD is
  // often under 720 rows (1280×536 scope); SD is 720×480.
  for (const [size, matrix] of [
    ["1280x536", "bt709"],
    ["1280x720", "bt709"],
    ["720x480", "bt601"],
  ] as const) {
    it(`untagged ${size} is read as ${matrix.toUpperCase()}`, async () => {
      const video = await makeLavfiClip(
        `untagged-${size}`,
        [`color=c=0x30C050:s=${size}:r=25:d=1`],
        `[0]format=rgb24,scale=out_color_matrix=${matrix}:out_range=tv,format=yuv420p[v]`,
        ["-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p"],
      );
      const { stdout } = await run("ffprobe", [
        "-v",
        "error",
        "-show_entries",
        "stream=color_space",
        "-of",
        "csv=p=0",
        video,
      ]);
      expect(stdout.trim()).toBe("unknown");
      const job = await runJob(video, { mode: "count", count: 1, format: "png" });
      const { data } = await rgbPixels(await frameBytes(job, 1));
      const mean = [0, 1, 2].map((c) => {
        let sum = 0;
        for (let i = c; i < data.length; i += 3) sum += data[i];
        return sum / (data.length / 3);
      });
      for (const [channel, expected] of [0x30, 0xc0, 0x50].entries()) {
        expect(Math.abs(mean[channel] - expected)).toBeLessThan(6);
      }
    });
  }

  for (const hdr of ["pq", "hlg"] as const) {
    it(`HDR ${hdr.toUpperCase()} (BT.2020, 10-bit HEVC) is tone-mapped, not washed out`, async () => {
      const video = await makeTestVideo({ hdr, durationSeconds: 1 });
      const job = await runJob(video, { mode: "count", count: 1, format: "png" });
      const pattern = await readImagePattern(await frameBytes(job, 1));
      expect(pattern.number).toBe(15);
      // Reference white (203 nits) read as plain BT.709 comes out ≈146 grey; mapped, near white.
      expect(pattern.cellMean(0)).toBeGreaterThan(200);
      expect(pattern.cellMean(3)).toBeLessThan(10);
    });
  }
});

describe("formats", () => {
  const magic: Record<string, (bytes: Buffer) => boolean> = {
    jpg: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
    png: (b) =>
      b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
    webp: (b) => b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP",
  };
  const sharpFormat: Record<string, string> = { jpg: "jpeg", png: "png", webp: "webp" };

  for (const format of ["jpg", "png", "webp"] as const) {
    it(`${format}: right magic bytes, file name and picture`, async () => {
      const video = await makeTestVideo({ durationSeconds: 1 });
      const job = await runJob(video, { mode: "timestamps", timestamps: [0.2, 0.7], format });
      expect(job.outcome.frames.map((f) => f.key)).toEqual([
        `frame-0001.${format}`,
        `frame-0002.${format}`,
      ]);
      const bytes = await frameBytes(job, 2);
      expect(magic[format](bytes)).toBe(true);
      expect((await sharp(bytes).metadata()).format).toBe(sharpFormat[format]);
      expect((await readImagePattern(bytes)).number).toBe(21);
    });
  }
});
