// Where frames go: files, a streamed ZIP, and the edge upload contract (with retries).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { unzipSync } from "fflate";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLECT_AFTER_BYTES, collectEncodedImage } from "../../extractor/encode.ts";
import { extractFrames } from "../../extractor/job.ts";
import { ARCHIVE_PART_BYTES, EdgeClient, EdgeSink } from "../../extractor/output/edge-sink.ts";
import { ZipWriter } from "../../extractor/output/zip-writer.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import type { FakeEdge } from "./fake-edge.ts";
import { startFakeEdge } from "./fake-edge.ts";
import { cfrFrameAt, deliveredNumbers, misreadingSource, runJob } from "./helpers.ts";

describe("ZIP output", () => {
  it("output both: a ZIP whose entries are the single frames, byte for byte", async () => {
    const video = await makeTestVideo({ durationSeconds: 2 });
    const job = await runJob(video, { mode: "count", count: 4, output: "both", format: "png" });
    expect(job.outcome.zip?.key).toBe("frames.zip");
    const zipBytes = await readFile(join(job.directory, "frames.zip"));
    expect(job.outcome.zip?.bytes).toBe(zipBytes.length);
    const entries = unzipSync(zipBytes);
    expect(Object.keys(entries)).toEqual([1, 2, 3, 4].map((i) => `frame-000${i}.png`));
    for (const [name, bytes] of Object.entries(entries)) {
      expect(Buffer.from(bytes).equals(await readFile(join(job.directory, name)))).toBe(true);
    }
    const numbers = await Promise.all(
      Object.values(entries).map(async (b) => (await readImagePattern(b)).number),
    );
    expect(numbers).toEqual(await deliveredNumbers(job));
    expect(numbers).toEqual([7, 22, 37, 52]);
  });

  it("output zip: only the ZIP, no single files", async () => {
    const video = await makeTestVideo({ durationSeconds: 2 });
    const job = await runJob(video, { mode: "count", count: 3, output: "zip" });
    const entries = unzipSync(await readFile(join(job.directory, "frames.zip")));
    expect(Object.keys(entries)).toEqual([1, 2, 3].map((i) => `frame-000${i}.jpg`));
    expect(job.outcome.frames.map((f) => [f.status, f.key])).toEqual([
      ["ok", null],
      ["ok", null],
      ["ok", null],
    ]);
    await expect(readFile(join(job.directory, "frame-0001.jpg"))).rejects.toThrow();
  });

  it("stops calling the edge once the job's signal ends, whatever retries are left", async () => {
    let calls = 0;
    const client = new EdgeClient({
      baseUrl: "http://edge.invalid",
      token: "t",
      attempts: 50,
      retryDelayMs: 40,
      signal: AbortSignal.timeout(150),
      fetch: async () => {
        calls++;
        return new Response("busy", { status: 503 });
      },
    });
    await expect(client.call("PUT", "/internal/files/x", "body")).rejects.toThrow();
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThan(10);
  });

  it("fails clearly rather than write a ZIP past what 32-bit ZIP fields can hold", async () => {
    const written: number[] = [];
    const upload = {
      write: async (chunk: Uint8Array) => {
        written.push(chunk.length);
      },
      finish: async () => ({ key: "frames.zip", bytes: 0 }),
      abort: async () => {},
    };
    const zip = new ZipWriter(upload, new Date(), 10_000);
    await zip.add("frame-0001.jpg", new Uint8Array(6000));
    await expect(zip.add("frame-0002.jpg", new Uint8Array(6000))).rejects.toMatchObject({
      name: "ExtractionFailed",
    });
    expect(written.reduce((a, b) => a + b, 0)).toBeLessThan(10_000);
  });

  it("output urls: no ZIP", async () => {
    const video = await makeTestVideo({ durationSeconds: 2 });
    const job = await runJob(video, { mode: "count", count: 2, output: "urls" });
    expect(job.outcome.zip).toBeNull();
  });

  it("more than 300 frames are zipped even when only URLs were asked for", async () => {
    const video = await makeTestVideo({ durationSeconds: 2, width: 160, height: 90 });
    const job = await runJob(video, { mode: "count", count: 301, output: "urls" });
    const entries = unzipSync(await readFile(join(job.directory, "frames.zip")));
    expect(Object.keys(entries)).toHaveLength(301);
    expect(Object.keys(entries)[300]).toBe("frame-0301.jpg");
    expect((await readImagePattern(entries["frame-0301.jpg"])).number).toBe(59);
  });
});

describe("edge upload contract", () => {
  let edge: FakeEdge;
  beforeAll(async () => {
    edge = await startFakeEdge();
  });
  afterAll(async () => {
    await edge.close();
  });

  async function uploadJob(options: Partial<JobOptions>, partBytes = 4096, token = edge.token) {
    const video = await makeTestVideo({ durationSeconds: 2, width: 640, height: 360 });
    const client = new EdgeClient({ baseUrl: edge.baseUrl, token, retryDelayMs: 10 });
    const sink = new EdgeSink(client, { kind: "job", jobId: "j1", attemptId: "a1" }, partBytes);
    return extractFrames(
      {
        input: video,
        options: {
          mode: "count",
          format: "png",
          resolution: 360,
          output: "both",
          count: 6,
          ...options,
        },
        maxVideoSeconds: 60,
        clipToMax: false,
        maxFrames: 100,
      },
      sink,
    );
  }

  it("R2 parts are 8 MiB (at least R2's 5 MiB minimum)", () => {
    expect(ARCHIVE_PART_BYTES).toBe(8 * 1024 * 1024);
  });

  it("stores each frame under {kind}/{job}/{attempt}/frame-NNNN and streams the ZIP in parts", async () => {
    const outcome = await uploadJob({});
    expect(outcome.status).toBe("completed");
    const keys = outcome.frames.map((f) => f.key);
    expect(keys).toEqual([1, 2, 3, 4, 5, 6].map((i) => `job/j1/a1/frame-000${i}.png`));
    for (const key of keys) {
      const file = edge.files.get(key as string);
      expect(file?.contentType).toBe("image/png");
      expect((await readImagePattern(file?.bytes as Buffer)).upright).toBe(true);
    }
    const zip = edge.uploads.get("job/j1/a1/frames.zip");
    expect(outcome.zip).toEqual({ key: "job/j1/a1/frames.zip", bytes: zip?.bytes.length });
    const sizes = zip?.partSizes ?? [];
    expect(sizes.length).toBeGreaterThan(1);
    expect(sizes.slice(0, -1).every((size) => size === 4096)).toBe(true);
    const entries = unzipSync(new Uint8Array(zip?.bytes as Buffer));
    expect(
      Buffer.from(entries["frame-0006.png"]).equals(
        edge.files.get(keys[5] as string)?.bytes as Buffer,
      ),
    ).toBe(true);
  });

  it("a job that decodes again without hiding sends each file anew and a ZIP made from its start", async () => {
    const fps = 30;
    const video = await makeTestVideo({ fps, gop: 60, bframes: 3, durationSeconds: 20 });
    const { source, misled } = await misreadingSource(video);
    const timestamps = [30, 31, 32, 33, 270, 271, 272, 273].map((n) => (n + 0.5) / fps);
    const client = new EdgeClient({ baseUrl: edge.baseUrl, token: edge.token, retryDelayMs: 10 });
    const sink = new EdgeSink(client, { kind: "job", jobId: "j2", attemptId: "a2" }, 4096);
    const before = edge.calls.length;
    try {
      const outcome = await extractFrames(
        {
          input: source.input,
          options: {
            mode: "timestamps",
            timestamps,
            format: "png",
            resolution: 240,
            output: "both",
          },
          maxVideoSeconds: 60,
          clipToMax: false,
          maxFrames: 100,
          source,
        },
        sink,
        { strategy: "dense" },
      );
      expect(misled()).toBeGreaterThan(0);
      expect(outcome.status).toBe("completed");
      // Two archives were started (the first given up), one completed.
      const calls = edge.calls.slice(before);
      const started = calls.filter((c) =>
        /^POST \/internal\/uploads\/job\/j2\/a2\/frames\.zip$/.test(c),
      );
      expect(started).toHaveLength(2);
      const zip = unzipSync(
        new Uint8Array(edge.uploads.get("job/j2/a2/frames.zip")?.bytes as Buffer),
      );
      const names = timestamps.map((_, i) => `frame-000${i + 1}.png`);
      expect(Object.keys(zip).sort()).toEqual(names);
      const expected = timestamps.map((t) => cfrFrameAt(t, fps));
      for (const [i, name] of names.entries()) {
        const file = edge.files.get(`job/j2/a2/${name}`)?.bytes as Buffer;
        expect(Buffer.from(zip[name]).equals(file)).toBe(true);
        expect((await readImagePattern(file)).number).toBe(expected[i]);
      }
      expect(outcome.frames.map((f) => f.key)).toEqual(names.map((n) => `job/j2/a2/${n}`));
    } finally {
      await source.close();
    }
  });

  it("sends a job's frames with their thumbnails in batches: 32 files at once, the rest when the job has them all", async () => {
    const before = edge.batches.length;
    const callsBefore = edge.calls.length;
    const outcome = await uploadJob({ count: 20, output: "urls", format: "jpg" });
    expect(outcome.status).toBe("completed");
    const key = (kind: "frame" | "thumb", i: number) =>
      `job/j1/a1/${kind}-${String(i).padStart(4, "0")}.jpg`;
    // Each picture's thumbnail goes just before its frame.
    const files = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => [
        key("thumb", from + i),
        key("frame", from + i),
      ]).flat();
    expect(edge.batches.slice(before)).toEqual([files(1, 16), files(17, 20)]);
    expect(edge.calls.slice(callsBefore).filter((c) => c.startsWith("PUT"))).toEqual([]);
    const frames = Array.from({ length: 20 }, (_, i) => key("frame", i + 1));
    expect(outcome.frames.map((f) => f.key)).toEqual(frames);
    expect(outcome.frames.map((f) => f.thumb_key)).toEqual(
      frames.map((k) => k.replace("frame-", "thumb-")),
    );
    for (const frameKey of frames) {
      const file = edge.files.get(frameKey);
      expect(file?.contentType).toBe("image/jpeg");
      expect((await readImagePattern(file?.bytes as Buffer)).upright).toBe(true);
    }
  });

  it("a thumbnail is a JPEG at most 320 px wide, the frame's shape, made from the same picture", async () => {
    const outcome = await uploadJob({ count: 2, output: "urls", format: "png", resolution: 720 });
    expect(outcome.status).toBe("completed");
    for (const frame of outcome.frames) {
      const thumb = edge.files.get(frame.thumb_key as string);
      const original = edge.files.get(frame.key as string);
      expect(thumb?.contentType).toBe("image/jpeg");
      const size = await sharp(thumb?.bytes as Buffer).metadata();
      const full = await sharp(original?.bytes as Buffer).metadata();
      expect(size.format).toBe("jpeg");
      expect(size.width).toBe(320);
      expect(size.height).toBe(Math.round((320 * (full.height ?? 0)) / (full.width ?? 1)));
      // The same picture, smaller: the two agree pixel for pixel once both are made 32 px wide.
      const small = async (bytes: Buffer) => sharp(bytes).resize(32).greyscale().raw().toBuffer();
      const [a, b] = await Promise.all([
        small(thumb?.bytes as Buffer),
        small(original?.bytes as Buffer),
      ]);
      const difference = a.reduce((sum, v, i) => sum + Math.abs(v - b[i]), 0) / a.length;
      expect(difference).toBeLessThan(8);
    }
  });

  it("a lone frame and its thumbnail go in one call", async () => {
    const callsBefore = edge.calls.length;
    const outcome = await uploadJob({ count: 1, output: "urls", format: "jpg" });
    expect(outcome.status).toBe("completed");
    const uploads = edge.calls
      .slice(callsBefore)
      .filter((c) => /internal\/(files|file-batches)\//.test(c));
    expect(uploads).toEqual(["POST /internal/file-batches/job/j1/a1"]);
  });

  it("retries calls that fail with 5xx", async () => {
    edge.failNext(/^POST \/internal\/file-batches\//, 2);
    edge.failNext(/^PUT \/internal\/uploads\//, 1);
    edge.failNext(/complete$/, 1);
    const before = edge.calls.length;
    const outcome = await uploadJob({ count: 2 });
    expect(outcome.status).toBe("completed");
    const calls = edge.calls.slice(before);
    expect(calls.filter((c) => c === "POST /internal/file-batches/job/j1/a1")).toHaveLength(3);
    expect(outcome.frames.map((f) => f.key)).toEqual([
      "job/j1/a1/frame-0001.png",
      "job/j1/a1/frame-0002.png",
    ]);
  });

  it("a refused upload (4xx) is not retried and fails the job", async () => {
    const before = edge.calls.length;
    const outcome = await uploadJob({ count: 2, output: "urls" }, undefined, "wrong-token");
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.name).toBe("ExtractionFailed");
    const uploads = edge.calls
      .slice(before)
      .filter((c) => /internal\/(files|file-batches)/.test(c));
    expect(uploads).toEqual(["POST /internal/file-batches/job/j1/a1"]);
  });

  it("a batch that keeps failing fails the job, and every frame queued with it", async () => {
    const client = new EdgeClient({ baseUrl: edge.baseUrl, token: edge.token, retryDelayMs: 1 });
    const sink = new EdgeSink(client, { kind: "job", jobId: "j3", attemptId: "a3" });
    edge.failNext(/^POST \/internal\/file-batches\/job\/j3\//, 4);
    const queued = await Promise.all(
      ["frame-0001.jpg", "frame-0002.jpg"].map((name) =>
        sink.queueFile(name, Buffer.from(name), "image/jpeg"),
      ),
    );
    await expect(sink.flush()).rejects.toMatchObject({ name: "EdgeCallError" });
    for (const { stored } of queued) await expect(stored).rejects.toThrow(/answered 500/);
    await expect(sink.queueFile("frame-0003.jpg", Buffer.from("x"), "image/jpeg")).rejects.toThrow(
      /answered 500/,
    );
    expect([...edge.files.keys()].filter((k) => k.startsWith("job/j3/"))).toEqual([]);
  });
});

describe("memory of stored images", () => {
  it("collectEncodedImage frees a large image's bytes as soon as nothing holds them", async () => {
    const held = () => process.memoryUsage().arrayBuffers;
    // V8 frees a collected image's bytes on a background thread, which a busy machine may
    // not run before the check below: here they are freed within the collection itself.
    setFlagsFromString("--no-concurrent-array-buffer-sweeping");
    let image: Buffer | null = Buffer.alloc(32 * 1024 * 1024, 7);
    const before = held();
    expect(image.length).toBeGreaterThanOrEqual(COLLECT_AFTER_BYTES);
    image = null;
    collectEncodedImage();
    // Freed by the collection itself, not by a later one V8 chose to run.
    expect(before - held()).toBeGreaterThanOrEqual(32 * 1024 * 1024);
  });
});
