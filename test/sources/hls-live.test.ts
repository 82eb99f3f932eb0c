// mode live on a local live playlist that slides with the clock (decision 0360): the latest frame
// is the newest segment's last, every/duration captures frames `every` seconds apart in stream
// time as the stream plays, each with captured_at from EXT-X-PROGRAM-DATE-TIME; a stream that
// ends early completes with what it caught, one that stalls fails; a VOD playlist, a file and a
// private segment URI (in a later reload too) are refused. Frames are read back by the number
// painted in each picture. Tests that wait for the stream run the origin and the live source on
// one simulated clock (support/virtual-clock.ts): a wait moves it on at once; the real timer is
// what test/e2e/live.test.ts runs through the stack.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { emptyOutcome } from "../../extractor/job.ts";
import { liveOffsets, runLiveJob, watchedSeconds } from "../../extractor/live.ts";
import { DirectorySink } from "../../extractor/output/directory-sink.ts";
import { SourceError } from "../../extractor/sources/errors.ts";
import { openLiveSource } from "../../extractor/sources/hls-live-source.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { readImagePattern } from "../support/videos.ts";
import type { LiveOrigin } from "./support/hls-live-origin.ts";
import {
  LIVE_EPOCH_MS,
  liveFrameAt,
  makeLiveSegments,
  startLiveOrigin,
} from "./support/hls-live-origin.ts";
import { PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { startTestServer } from "./support/servers.ts";
import { type VirtualClock, virtualClock } from "./support/virtual-clock.ts";

const origins: LiveOrigin[] = [];
let output: string;

const live = (extra: Partial<JobOptions> = {}): JobOptions => ({
  mode: "live",
  format: "png",
  resolution: 360,
  output: "urls",
  ...extra,
});

async function origin(options: Parameters<typeof startLiveOrigin>[0]) {
  const started = await startLiveOrigin(options);
  origins.push(started);
  return started;
}

async function runLive(
  url: string,
  options: JobOptions,
  policy = testPolicy(),
  clock?: VirtualClock,
) {
  const source = await openLiveSource(url, "direct", {
    resolution: options.resolution,
    allowPrivate: false,
    policy,
    maxBytes: 50_000_000,
    deadlineMs: 60_000,
    now: clock?.now,
    sleep: clock?.sleep,
  });
  const outcome = emptyOutcome(options);
  const directory = await mkdtemp(join(output, "job-"));
  try {
    await runLiveJob(
      options,
      source.live,
      new DirectorySink(directory),
      { signal: new AbortController().signal, maxFrames: 300 },
      outcome,
    );
  } finally {
    await source.close();
  }
  const numbers = await Promise.all(
    outcome.frames.map(async (f) =>
      f.key ? (await readImagePattern(await readFile(join(directory, f.key)))).number : null,
    ),
  );
  return { outcome, numbers, live: source.live };
}

beforeAll(async () => {
  await makeLiveSegments();
  output = await mkdtemp(join(tmpdir(), "stills-hls-live-"));
}, 120_000);

afterEach(async () => {
  for (const started of origins.splice(0)) await started.close();
});

afterAll(async () => {
  await rm(output, { recursive: true, force: true });
});

describe("the plan of a live job", () => {
  it("every 2 s for 6 s is three frames, 0, 2 and 4 s after the first; no every is one", () => {
    expect(liveOffsets({ every: 2, duration: 6 })).toEqual([0, 2, 4]);
    expect(liveOffsets({})).toEqual([0]);
    expect(liveOffsets({ every: 0.5, duration: 1.2 })).toEqual([0, 0.5, 1]);
  });

  it("watched seconds: every seconds per frame up to the last caught, at most the duration", () => {
    expect(watchedSeconds({ every: 2, duration: 6 }, 2)).toBe(6);
    expect(watchedSeconds({ every: 2, duration: 6 }, 0)).toBe(2);
    expect(watchedSeconds({ every: 60, duration: 90 }, 1)).toBe(90);
    expect(watchedSeconds({}, 0)).toBe(0);
  });
});

describe("mode live on a sliding playlist", () => {
  it("with no every: the newest segment's last frame, now, on air at its PROGRAM-DATE-TIME", async () => {
    // Clock 20 s: the window is segments 5-9, the newest (9) spans 18-20 s; its last frame is 199.
    const stream = await origin({ host: PUBLIC_LOOPBACK, clock: 20.5 });
    stream.freeze();
    const { outcome, numbers, live: watched } = await runLive(stream.url, live());
    expect(outcome.error).toBeNull();
    expect(outcome.status).toBe("completed");
    expect(numbers).toEqual([199]);
    const [frame] = outcome.frames;
    expect(frame.timestamp).toBeCloseTo(19.9, 6);
    expect(frame.pts).toBeCloseTo(19.9, 6);
    expect(frame.captured_at).toBe(new Date(LIVE_EPOCH_MS + 19_900).toISOString());
    expect(frame.captured_at_source).toBe("program_date_time");
    expect(outcome.processed_seconds).toBe(0);
    // Only the newest segment was fetched, never the window.
    expect(stream.segmentsFetched()).toEqual([9]);
    expect(watched.fetchedSegments).toEqual([9]);
  });

  it("every 2 s for 6 s: three frames in stream order, 2 s apart, as the stream plays", async () => {
    const time = virtualClock();
    const stream = await origin({ host: PUBLIC_LOOPBACK, clock: 20.2, now: time.now });
    const started = time.now();
    const { outcome, numbers } = await runLive(
      stream.url,
      live({ every: 2, duration: 6 }),
      testPolicy(),
      time,
    );
    expect(outcome.error).toBeNull();
    expect(outcome.status).toBe("completed");
    // The first is the newest frame when the job began (199), then 21.9 s and 23.9 s.
    expect(numbers).toEqual([199, 219, 239]);
    expect(outcome.frames.map((f) => f.timestamp)).toEqual([19.9, 21.9, 23.9]);
    expect(outcome.frames.map((f) => liveFrameAt(f.pts ?? -1))).toEqual([199, 219, 239]);
    expect(outcome.frames.map((f) => f.captured_at)).toEqual(
      [19_900, 21_900, 23_900].map((ms) => new Date(LIVE_EPOCH_MS + ms).toISOString()),
    );
    // It waited for the stream: segment 11 (22-24 s) is on the list from clock 24 on.
    expect(time.now() - started).toBeGreaterThanOrEqual(3_500);
    // Only the segments holding the wanted times, each once.
    expect(stream.segmentsFetched()).toEqual([9, 10, 11]);
    expect(outcome.processed_seconds).toBe(6);
  }, 30_000);

  it("without PROGRAM-DATE-TIME, captured_at is when the segment was read", async () => {
    const stream = await origin({ host: PUBLIC_LOOPBACK, clock: 20.5, noDateTime: true });
    stream.freeze();
    const before = Date.now();
    const { outcome } = await runLive(stream.url, live());
    const [frame] = outcome.frames;
    expect(frame.captured_at_source).toBe("received");
    const at = Date.parse(frame.captured_at ?? "");
    // Read at `before` or later, plus the frame's 1.9 s into its segment.
    expect(at).toBeGreaterThanOrEqual(before + 1_900);
    expect(at).toBeLessThanOrEqual(Date.now() + 1_900);
  });

  it("a stream that ends (EXT-X-ENDLIST) mid-job completes with what it caught", async () => {
    const time = virtualClock();
    const stream = await origin({ host: PUBLIC_LOOPBACK, clock: 20.2, now: time.now });
    // The stream ends once segment 10 (20-22 s) is out: 21.9 s is caught, 23.9 s never airs.
    time.at(2_300, () => stream.end());
    const { outcome, numbers } = await runLive(
      stream.url,
      live({ every: 2, duration: 6 }),
      testPolicy(),
      time,
    );
    expect(outcome.status).toBe("completed");
    expect(outcome.frames.map((f) => f.status)).toEqual(["ok", "ok", "error"]);
    expect(numbers).toEqual([199, 219, null]);
    expect(outcome.frames[2].error).toBe("the stream ended (EXT-X-ENDLIST) before this time");
    expect(outcome.frames[2].timestamp).toBeCloseTo(23.9, 6);
    expect(outcome.processed_seconds).toBe(4);
  }, 30_000);

  it("a stream that stalls fails after 3 target durations (at least 6 s) with the reason", async () => {
    const time = virtualClock();
    const stream = await origin({ host: PUBLIC_LOOPBACK, clock: 20.5, now: time.now });
    stream.freeze();
    const started = time.now();
    const error = await runLive(
      stream.url,
      live({ every: 2, duration: 6 }),
      testPolicy(),
      time,
    ).catch((e) => e);
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toMatch(
      /^the live playlist gained no segment for \d+ s \(the wait is 6 s/,
    );
    expect(error.userMessage).toMatch(/stopped advancing/);
    expect(time.now() - started).toBeGreaterThanOrEqual(6_000);
    expect(time.now() - started).toBeLessThan(12_000);
  }, 30_000);
});

describe("mode live on MPEG-TS segments", () => {
  it("gives the newest frame and frames 2 s apart, each segment remuxed alone", async () => {
    const time = virtualClock();
    const stream = await origin({ host: PUBLIC_LOOPBACK, clock: 20.2, ts: true, now: time.now });
    const { outcome, numbers } = await runLive(
      stream.url,
      live({ every: 2, duration: 4 }),
      testPolicy(),
      time,
    );
    expect(outcome.error).toBeNull();
    expect(numbers).toEqual([199, 219]);
    const [first, second] = outcome.frames;
    // Stream time is the segments' own PTS clock (ffmpeg's muxer starts it past 0).
    expect(second.timestamp - first.timestamp).toBeCloseTo(2, 6);
    expect(liveFrameAt((second.pts ?? 0) - (first.pts ?? 0))).toBe(20);
    expect(first.captured_at).toBe(new Date(LIVE_EPOCH_MS + 19_900).toISOString());
    expect(stream.segmentsFetched()).toEqual([9, 10]);
  }, 30_000);
});

describe("what mode live refuses", () => {
  let privateHost: TestServer;

  beforeAll(async () => {
    privateHost = await startTestServer();
    privateHost.route("/secret.m4s", (_req, res) => res.end("secret"));
  });

  afterEach(() => {
    expect(privateHost.requests, "nothing was asked of the private address").toEqual([]);
  });

  afterAll(async () => {
    await privateHost?.close();
  });

  it("a live playlist whose segment is on a private address, before any fetch", async () => {
    const stream = await origin({
      host: PUBLIC_LOOPBACK,
      clock: 20.5,
      segmentUri: (i) => (i === 8 ? `${privateHost.origin}/secret.m4s` : `s${i}.m4s`),
    });
    const error = await runLive(stream.url, live()).catch((e) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
    expect(stream.segmentsFetched()).toEqual([]);
    expect(stream.server.requests.map((r) => r.url)).toEqual(["/live.m3u8"]);
  });

  it("a private segment that appears in a later reload is refused before it is fetched", async () => {
    const time = virtualClock();
    const stream = await origin({ host: PUBLIC_LOOPBACK, clock: 20.2, now: time.now });
    time.at(500, () =>
      stream.setSegmentUri((i) => (i >= 10 ? `${privateHost.origin}/secret.m4s` : `s${i}.m4s`)),
    );
    const error = await runLive(
      stream.url,
      live({ every: 2, duration: 6 }),
      testPolicy(),
      time,
    ).catch((e) => e);
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
    expect(stream.segmentsFetched()).toEqual([9]);
  }, 30_000);

  it("a complete (VOD) playlist: InvalidUrl naming why", async () => {
    const directory = await makeLiveSegments();
    const server = await startTestServer(PUBLIC_LOOPBACK);
    server.route("/vod.m3u8", async (_req, res) => {
      res.end(await readFile(join(directory, "index.m3u8")));
    });
    try {
      const error = await runLive(`${server.origin}/vod.m3u8`, live()).catch((e) => e);
      expect(error.name).toBe("InvalidUrl");
      expect(error.message).toMatch(
        /mode live needs a live HLS playlist, and this link is a complete \(VOD\) playlist/,
      );
    } finally {
      await server.close();
    }
  });

  it("a video file: InvalidUrl naming why", async () => {
    const directory = await makeLiveSegments();
    const server = await startTestServer(PUBLIC_LOOPBACK);
    const bytes = Buffer.concat([
      await readFile(join(directory, "init.mp4")),
      await readFile(join(directory, "s0.m4s")),
    ]);
    server.route("/clip.mp4", (_req, res) => {
      res
        .writeHead(200, { "content-type": "video/mp4", "content-length": bytes.length })
        .end(bytes);
    });
    try {
      const error = await runLive(`${server.origin}/clip.mp4`, live()).catch((e) => e);
      expect(error.name).toBe("InvalidUrl");
      expect(error.message).toMatch(
        /mode live needs a live HLS playlist, and this link is a video file/,
      );
    } finally {
      await server.close();
    }
  });
});
