// Short seek runs batched into one ffmpeg (issue 11): still the frame on screen at every time.
// Each test video shows its frame number in its pixels; the expected number comes from the
// frame rate, never from the code under test. The debug log says how the job was decoded, so
// the test also fails if the batch silently fell back to one run per seek.

import { stat } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setLogLevel } from "../../extractor/log.ts";
import { openSource } from "../../extractor/sources/index.ts";
import { fileRoute, startTestServer } from "../sources/support/servers.ts";
import {
  makeTestVideo,
  probeFrameTimes,
  readImagePattern,
  type TestVideoSpec,
} from "../support/videos.ts";
import { cfrFrameAt, deliveredNumbers, frameBytes, rgbPixels, runJob } from "./helpers.ts";

let lines: string[] = [];

beforeEach(() => {
  lines = [];
  setLogLevel("debug");
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  setLogLevel("info");
});

function logged(message: string): Record<string, unknown>[] {
  return lines
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.message === message);
}

/**
 * `video` served with ranges from a local origin and opened as a direct link (the relay, the
 * index, views): `served.requests()` counts the origin's requests since it was opened.
 */
async function servedOverHttp(video: string, onBytes?: (n: number) => void) {
  const server = await startTestServer();
  server.route("/v.mp4", fileRoute(video, { ranges: true, onBytes }));
  const source = await openSource(`${server.origin}/v.mp4`, "direct", {
    resolution: 720,
    allowPrivate: true,
    maxBytes: 500 * 1024 * 1024,
    deadlineMs: 60_000,
  });
  const opened = server.requests.length;
  return {
    source,
    requests: () => server.requests.length - opened,
    close: async () => {
      await source.close();
      await server.close();
    },
  };
}

describe("batched seeks", () => {
  it("deliver the frame on screen at each time, mid-GOP, at and just before frame edges", async () => {
    const fps = 30;
    const video = await makeTestVideo({ fps, gop: 60, bframes: 2, durationSeconds: 40 });
    const timestamps = [
      3.3,
      5 - 0.0005,
      7.71,
      10,
      11.05,
      14.9,
      15 + 1 / fps,
      18.42,
      22 - 1 / 60,
      25.5,
      29.13,
      33.3,
    ];
    const run = await runJob(video, { mode: "timestamps", timestamps }, { strategy: "sparse" });

    const expected = timestamps.map((t) => cfrFrameAt(t, fps));
    expect(await deliveredNumbers(run)).toEqual(expected);
    expect(run.outcome.frames.map((f) => f.pts)).toEqual(
      expected.map((n) => Math.round((n / fps) * 1e6) / 1e6),
    );
    // 11 seek groups (14.9 and 15.03 share a GOP) split into two batches of about equal
    // decoding that run side by side, none decoded again alone.
    const [plan] = logged("decode plan");
    expect(plan.times).toBe(12);
    expect(plan.runs).toBe(2);
    // Dealt out so both end together (decode-plan.ts dealtSideBySide): their frames arrive
    // interleaved, and are delivered in time order, each the exact one above.
    expect(plan.dealt).toBe(true);
    // The keyframes came from the lookup made alongside the probe, not from a second ffprobe.
    expect(plan.keyframes_from).toBe("early lookup");
    expect(logged("batch group decoded alone")).toEqual([]);
  });

  it("turn every part of a batch upright once, not only the first (rotated 90°)", async () => {
    const fps = 30;
    // Stored 180×320, shown 320×180 (makeTestVideo turns it back through the display matrix).
    const video = await makeTestVideo({ fps, gop: 60, rotation: 90, durationSeconds: 40 });
    const timestamps = [3.3, 7.71, 11.05, 14.9, 18.42, 25.5, 29.13, 33.3];
    const run = await runJob(video, { mode: "timestamps", timestamps }, { strategy: "sparse" });

    expect(await deliveredNumbers(run)).toEqual(timestamps.map((t) => cfrFrameAt(t, fps)));
    for (const frame of run.outcome.frames) {
      const pattern = await readImagePattern(await frameBytes(run, frame.index));
      expect(pattern.info).toMatchObject({ width: 320, height: 180 });
      expect(pattern.upright).toBe(true);
    }
    const [plan] = logged("decode plan");
    expect(plan.runs).toBe(2);
    expect(logged("batch group decoded alone")).toEqual([]);
  });

  it("deliver the same exact frames through the relay, each batch one view read in few origin requests", async () => {
    const fps = 30;
    const video = await makeTestVideo({
      fps,
      gop: 60,
      bframes: 2,
      durationSeconds: 40,
      width: 640,
      height: 360,
      grain: true,
    });
    const timestamps = [3.3, 7.71, 11.05, 18.42, 25.5, 33.3];
    let originBytes = 0;
    const {
      source,
      requests: originRequests,
      close,
    } = await servedOverHttp(video, (n) => {
      originBytes += n;
    });
    try {
      const run = await runJob(
        source.input,
        { mode: "timestamps", timestamps, resolution: 360 },
        { strategy: "sparse", source },
      );
      expect(await deliveredNumbers(run)).toEqual(timestamps.map((t) => cfrFrameAt(t, fps)));
      expect(logged("decode plan")[0].runs).toBe(2);
      expect(logged("batch group decoded alone")).toEqual([]);
      expect(logged("batch reads a view")).toHaveLength(2);
      // Each batch reads one view of the file (ffmpeg/mp4-spans.ts): each stretch (~2 MB of
      // grain at 12.6 Mbit/s) in a few growing requests, the view's index from the relay's
      // memory; the keyframes come from the MP4's own index, and the probe takes a few: 27
      // measured. With one input per seek 40; with ffprobe's lookup reading a packet at every
      // seek 56–57; with 64 KiB parts alone 135.
      expect(originRequests()).toBeLessThanOrEqual(32);
      const { size } = await stat(video);
      // The six seeks' stretches and the index: 21 % of this file measured (13.3 of 63 MB);
      // the whole rest of the file at each seek would be several times the file.
      expect(originBytes).toBeLessThan(size * 0.25);
    } finally {
      await close();
    }
  });

  it("decode an open GOP's stretches from their own seeks: an I-frame that is not IDR is no clean start", async () => {
    const fps = 30;
    const video = await makeTestVideo({
      fps,
      gop: 60,
      bframes: 2,
      durationSeconds: 40,
      openGop: true,
    });
    // x264's open GOPs happen to decode alike from the stretch before (none of its pictures
    // refers past the I-frame here, checked: the pixels match with the judgement forced clean),
    // so what fails without the judgement is the log of it, not the pixels.
    const timestamps = [3.3, 7.71, 9.99, 18.42, 21.99, 33.3];
    const { source, close } = await servedOverHttp(video);
    try {
      const options = { mode: "timestamps" as const, timestamps, format: "png" as const };
      const run = await runJob(source.input, options, { strategy: "sparse", source });
      expect(await deliveredNumbers(run)).toEqual(timestamps.map((t) => cfrFrameAt(t, fps)));
      // Bit for bit the pictures of the file's own seeks (no relay, no index).
      const alone = await runJob(video, options, { strategy: "sparse" });
      for (const frame of run.outcome.frames) {
        const [ours, theirs] = await Promise.all(
          [run, alone].map(async (r) => (await rgbPixels(await frameBytes(r, frame.index))).data),
        );
        expect(ours.equals(theirs), `frame at ${frame.timestamp} s`).toBe(true);
      }
      // The views were read, their stretches (each from an open GOP's I-frame) judged unclean
      // before a frame of them was delivered, and the groups decoded from their seeks.
      expect(logged("batch reads a view").length).toBeGreaterThan(0);
      expect(
        logged("a stretch of the view does not begin with an IDR picture").length,
      ).toBeGreaterThan(0);
      expect(logged("batch group decoded alone").length).toBeGreaterThan(0);
      expect(lines.some((line) => line.includes("the index disagreed"))).toBe(false);
    } finally {
      await close();
    }
  });

  // Through a view (ffmpeg/mp4-spans.ts) the decoder sees only the kept samples, with the times
  // the view's own index gives them: each shape whose times ffmpeg works out differently must
  // still give the frame on screen, from the view itself (no disagreement, no seek).
  const shapes: [string, TestVideoSpec, number[]][] = [
    ["B-frames, an edit list", { fps: 30, gop: 60, bframes: 3 }, []],
    ["29.97 fps, no B-frames", { fps: "30000/1001", gop: 45, bframes: 0 }, []],
    ["a first frame at 5 s", { fps: 25, gop: 50, bframes: 2, startTime: 5 }, []],
    ["turned 90°, with audio", { fps: 30, gop: 60, rotation: 90, audio: true }, []],
    ["variable frame rate", { variableFrameRate: true, gop: 60, bframes: 0 }, []],
    ["the first times in the first GOP", { fps: 30, gop: 60, bframes: 2 }, [0, 0.5, 1.99]],
  ];
  for (const [name, spec, early] of shapes) {
    it(`read a view of the file and deliver the frame on screen: ${name}`, async () => {
      const video = await makeTestVideo({ ...spec, durationSeconds: 40 });
      const timestamps = [...early, 3.3, 7.71, 11.05, 14.999, 18.42, 25.5, 29.13, 33.3];
      const frameTimes = await probeFrameTimes(video);
      const first = frameTimes[0];
      const expected = timestamps.map((t) => {
        let n = 0;
        frameTimes.forEach((time, k) => {
          if (time - first <= t + 1e-9) n = k;
        });
        return n;
      });
      const { source, close } = await servedOverHttp(video);
      try {
        const run = await runJob(
          source.input,
          { mode: "timestamps", timestamps },
          { strategy: "sparse", source },
        );
        expect(await deliveredNumbers(run)).toEqual(expected);
        expect(run.outcome.frames.map((f) => f.pts)).toEqual(
          expected.map((n) => expect.closeTo(frameTimes[n] - first, 5)),
        );
        expect(logged("batch reads a view").length).toBeGreaterThan(0);
        expect(logged("batch group decoded alone")).toEqual([]);
        expect(lines.some((line) => line.includes("the index disagreed"))).toBe(false);
      } finally {
        await close();
      }
    });
  }

  it("notice a view whose index names other frames than ffmpeg shows, and decode again without it", async () => {
    const fps = 30;
    const video = await makeTestVideo({ fps, gop: 60, bframes: 2, durationSeconds: 40 });
    const timestamps = [3.3, 7.71, 11.05, 18.42, 25.5, 33.3];
    const { source, close } = await servedOverHttp(video);
    const open = source.hidingRelay?.bind(source);
    if (!open) throw new Error("a source over HTTP has a relay");
    // An index that reads this file wrong: at each time it names the frame after the one on
    // screen. ffmpeg still decodes the view right, so only the check can notice.
    let misled = 0;
    source.hidingRelay = async () => {
      const relay = await open();
      const withSpans = relay.withSpans.bind(relay);
      relay.withSpans = (view, frames) => {
        const shownAt = view.shownAt as number[];
        for (let slot = 0; slot < shownAt.length; slot++) shownAt[slot] += 1 / fps;
        misled++;
        return withSpans(view, frames);
      };
      return relay;
    };
    try {
      const run = await runJob(
        source.input,
        { mode: "timestamps", timestamps },
        { strategy: "sparse", source },
      );
      expect(misled).toBeGreaterThan(0);
      expect(lines.some((line) => line.includes("the index disagreed"))).toBe(true);
      expect(await deliveredNumbers(run)).toEqual(timestamps.map((t) => cfrFrameAt(t, fps)));
      expect(run.outcome.frames.map((f) => f.status)).toEqual(timestamps.map(() => "ok"));
    } finally {
      await close();
    }
  });

  it("ask again for keyframes when the early lookup's clock is not the video's (start 1.5 s)", async () => {
    const fps = 30;
    const video = await makeTestVideo({
      fps,
      gop: 60,
      bframes: 2,
      durationSeconds: 30,
      startTime: 1.5,
    });
    const timestamps = [3.3, 9.71, 15.05, 21.4];
    const run = await runJob(video, { mode: "timestamps", timestamps }, { strategy: "sparse" });
    // Times count from the video's first frame, so the expected frame numbers do too.
    expect(await deliveredNumbers(run)).toEqual(timestamps.map((t) => cfrFrameAt(t, fps)));
    const [plan] = logged("decode plan");
    expect(plan.keyframes_from).toBe("probe");
  });

  it("decode a short clip straight through, not asking for keyframes no seek could pay for", async () => {
    // Six frames 2 s apart at 720p: a seek could skip at most 0.04 s of decoding per gap past
    // what starting its run costs, far less than the keyframe lookup's own run.
    const fps = 30;
    const video = await makeTestVideo({
      fps,
      gop: 60,
      bframes: 2,
      durationSeconds: 12,
      width: 1280,
      height: 720,
    });
    const run = await runJob(video, { mode: "count", count: 6 });
    const times = [1, 3, 5, 7, 9, 11];
    expect(await deliveredNumbers(run)).toEqual(times.map((t) => cfrFrameAt(t, fps)));
    const [plan] = logged("decode plan");
    expect(plan.runs).toBe(1);
    expect(plan.keyframes_from).toBeNull();
  });

  it("leave the last seconds of a video to single runs, which see its end", async () => {
    const fps = 25;
    const video = await makeTestVideo({ fps, gop: 50, bframes: 2, durationSeconds: 12 });
    const timestamps = [2.5, 4.3, 6.1, 8.9, 10.5, 11.99];
    const run = await runJob(video, { mode: "timestamps", timestamps }, { strategy: "sparse" });
    expect(await deliveredNumbers(run)).toEqual(timestamps.map((t) => cfrFrameAt(t, fps)));
    // 2.5, 4.3 and 6.1 batchable (over 5 s before the end), split for two cores: 2.5 and 4.3
    // in one batch, 6.1 alone; 8.9 alone; 10.5 and 11.99 share a GOP and run alone to the end
    // of the file.
    expect(logged("decode plan")[0].runs).toBe(4);
    expect(logged("batch group decoded alone")).toEqual([]);
  });
});
