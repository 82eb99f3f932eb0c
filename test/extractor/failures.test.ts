// Bad inputs and limits end in a clear JobError, never a crash or a hang.
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import {
  makeAudioOnly,
  makeFileWithBytes,
  makeTestVideo,
  VIDEO_CACHE_DIR,
} from "../support/videos.ts";
import { deliveredNumbers, runJob } from "./helpers.ts";

const run = promisify(execFile);

async function fasterStartCopy(video: string): Promise<string> {
  const path = `${VIDEO_CACHE_DIR}/faststart-copy.mp4`;
  await run("ffmpeg", [
    "-v",
    "error",
    "-y",
    "-i",
    video,
    "-c",
    "copy",
    "-movflags",
    "+faststart",
    path,
  ]);
  return path;
}

/** ffmpeg processes whose parent is this test process. */
async function ourFfmpegChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const match = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
    if (match?.[1].startsWith("ff") && Number(match[2]) === process.pid) found.push(Number(entry));
  }
  return found;
}

describe("inputs that are not (whole) videos", () => {
  it("a zero-byte file → NoVideoFound", async () => {
    const path = await makeFileWithBytes("empty.mp4", new Uint8Array());
    const { outcome } = await runJob(path, { mode: "count", count: 3 });
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatchObject({ name: "NoVideoFound", userMessage: expect.any(String) });
    expect(outcome.frames).toEqual([]);
  });

  it("text pretending to be a video → NoVideoFound", async () => {
    const path = await makeFileWithBytes(
      "notes.mp4",
      new TextEncoder().encode("hello ".repeat(999)),
    );
    const { outcome } = await runJob(path, { mode: "count", count: 3 });
    expect(outcome.error?.name).toBe("NoVideoFound");
  });

  it("an HLS playlist is refused by the demuxer whitelist → NoVideoFound", async () => {
    const playlist =
      "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n";
    const path = await makeFileWithBytes("playlist.mp4", new TextEncoder().encode(playlist));
    const { outcome } = await runJob(path, { mode: "count", count: 1 });
    expect(outcome.error?.name).toBe("NoVideoFound");
  });

  it("audio only → NoVideoFound, saying there is no video track", async () => {
    const { outcome } = await runJob(await makeAudioOnly(), { mode: "count", count: 3 });
    expect(outcome.error).toMatchObject({
      name: "NoVideoFound",
      message: expect.stringMatching(/audio/),
    });
  });

  it("an MP4 cut in half before its index (moov at the end) → NoVideoFound", async () => {
    const whole = await readFile(await makeTestVideo({ durationSeconds: 2 }));
    const path = await makeFileWithBytes(
      "cut-before-moov.mp4",
      whole.subarray(0, whole.length >> 1),
    );
    const { outcome } = await runJob(path, { mode: "count", count: 3 });
    expect(outcome.error?.name).toBe("NoVideoFound");
  });

  it("an MP4 whose media data is cut short: early frames delivered, later ones are errors", async () => {
    const whole = await readFile(
      await fasterStartCopy(await makeTestVideo({ durationSeconds: 4, gop: 15 })),
    );
    const path = await makeFileWithBytes(
      "cut-media.mp4",
      whole.subarray(0, Math.floor(whole.length * 0.45)),
    );
    const job = await runJob(path, { mode: "timestamps", timestamps: [0.5, 3.5] });
    expect(job.outcome.status).toBe("completed");
    expect(job.outcome.frames.map((f) => f.status)).toEqual(["ok", "error"]);
    expect(await deliveredNumbers(job)).toEqual([15, null]);
  });

  it("corrupt bytes in the middle: exact frames around the damage, never a later picture", async () => {
    const whole = Buffer.from(
      await readFile(await fasterStartCopy(await makeTestVideo({ durationSeconds: 3 }))),
    );
    for (let i = Math.floor(whole.length * 0.4); i < whole.length * 0.7; i += 7) whole[i] ^= 0x5a;
    const path = await makeFileWithBytes("corrupt.mp4", whole);
    const job = await runJob(path, { mode: "interval", every: 0.5 }, { deadlineSeconds: 20 });
    const { outcome } = job;
    expect(outcome.status).toBe("completed");
    expect(outcome.frames.map((f) => f.status)).toEqual(Array(6).fill("ok"));
    // Before and after the damage the exact frames; inside it the last picture that decoded,
    // and never one from later than the requested time.
    const numbers = await deliveredNumbers(job);
    expect(numbers[0]).toBe(0);
    expect(numbers.slice(4)).toEqual([60, 75]);
    for (const [i, f] of outcome.frames.entries()) {
      expect(numbers[i]).toBeLessThanOrEqual(Math.round(f.timestamp * 30));
    }
  });
});

describe("limits", () => {
  it("a video longer than the plan allows → VideoTooLong", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const { outcome } = await runJob(video, { mode: "count", count: 2 }, { maxVideoSeconds: 2 });
    expect(outcome.error?.name).toBe("VideoTooLong");
  });

  it("the limit applies to the span processed: a short range of a long video is allowed", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const ranged = await runJob(
      video,
      { mode: "count", count: 2, start: 0.5, end: 2 },
      { maxVideoSeconds: 2 },
    );
    expect(ranged.outcome.status).toBe("completed");
    // start + (i + ½)·span/N: 0.875 s and 1.625 s, frames 26 and 48 at 30 fps.
    expect(await deliveredNumbers(ranged)).toEqual([26, 48]);
    const early = await runJob(
      video,
      { mode: "timestamps", timestamps: [1] },
      { maxVideoSeconds: 2 },
    );
    expect(early.outcome.status).toBe("completed");
    const late = await runJob(
      video,
      { mode: "timestamps", timestamps: [2.5] },
      { maxVideoSeconds: 2 },
    );
    expect(late.outcome.error?.name).toBe("VideoTooLong");
  });

  it("clip_to_max (demo): only the opening is processed", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const job = await runJob(
      video,
      { mode: "count", count: 2 },
      { maxVideoSeconds: 2, clipToMax: true },
    );
    expect(job.outcome.status).toBe("completed");
    expect(job.outcome.processed_seconds).toBe(2);
    expect(job.outcome.frames.map((f) => f.timestamp)).toEqual([0.5, 1.5]);
    expect(await deliveredNumbers(job)).toEqual([15, 45]);
  });

  it("more frames than the plan allows → TooManyFrames", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const { outcome } = await runJob(video, { mode: "interval", every: 0.1 }, { maxFrames: 10 });
    expect(outcome.error?.name).toBe("TooManyFrames");
  });

  it("the deadline kills ffmpeg's whole process group and fails the job", async () => {
    // 200 PNGs of 720p: well past the deadline however fast the machine decodes and encodes.
    const video = await makeTestVideo({ width: 1280, height: 720, durationSeconds: 20, gop: 60 });
    const started = Date.now();
    const { outcome } = await runJob(
      video,
      { mode: "interval", every: 0.1, format: "png" },
      { deadlineSeconds: 0.5 },
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(outcome.error).toMatchObject({
      name: "ExtractionFailed",
      message: expect.stringMatching(/deadline/),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await ourFfmpegChildren()).toEqual([]);
  });
});

describe("what a failed job tells its user", () => {
  it("never carries the relay's secret path", async () => {
    const { withoutInternalUrls } = await import("../../extractor/errors.ts");
    const line =
      "ffmpeg exited 1: http://127.0.0.1:40123/3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6: Invalid data found";
    expect(withoutInternalUrls(line)).toBe("ffmpeg exited 1: <source> Invalid data found");
    expect(withoutInternalUrls("plain message")).toBe("plain message");
  });

  it("not even when the probe fails and ffprobe's last line quotes the relay's address", async () => {
    const { createServer } = await import("node:http");
    const token = "k2Jw9eVQ7mX0secretRelayPath4sT";
    const relay = createServer((_req, res) => res.writeHead(404).end("gone"));
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const port = (relay.address() as { port: number }).port;
    try {
      const { outcome } = await runJob(`http://127.0.0.1:${port}/${token}`, {
        mode: "count",
        count: 1,
      });
      expect(outcome.error?.name).toBe("NoVideoFound");
      // ffprobe said "http://127.0.0.1:PORT/TOKEN: Server returned 404 Not Found".
      expect(outcome.error?.message).toBe(
        "not a readable video file: <source> Server returned 404 Not Found",
      );
    } finally {
      relay.close();
    }
  });
});

describe("pictures too large to decode safely", () => {
  it("are refused after the probe, before any decoding", async () => {
    const { mkdtemp } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const path = join(await mkdtemp(join(tmpdir(), "stills-huge-")), "huge.mp4");
    // One gray frame of 8448×4352 (36.8 MP): above the 8192×4320 limit, cheap to encode.
    await run("ffmpeg", [
      "-v",
      "error",
      "-f",
      "lavfi",
      "-i",
      "color=c=gray:size=8448x4352:rate=1:d=1",
      "-frames:v",
      "1",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-pix_fmt",
      "yuv420p",
      path,
    ]);
    const { outcome } = await runJob(path, { mode: "count", count: 1 });
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatchObject({ name: "ExtractionFailed" });
    expect(outcome.error?.message).toContain("8448×4352");
  });
});
