// HLS VOD links (decision 0330): frames read through the relay are the original file's, bit for
// bit, at 12 exact times, and only the segments those times fall in are fetched.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { safeInputArgs } from "../../extractor/ffmpeg/args.ts";
import type { OpenSourceOptions } from "../../extractor/sources/index.ts";
import { openSource } from "../../extractor/sources/index.ts";
import { cacheTmpdir } from "../../scripts/lib/cache-tmpdir.mjs";
import type { TestServer } from "./support/servers.ts";
import { fileRoute, startTestServer } from "./support/servers.ts";
import { pictureAt, picturesAt } from "./support/videos.ts";

const run = promisify(execFile);
const DIRECTORY = join(cacheTmpdir(), "stills-hls-vod-test-v1");
const SEGMENT_SECONDS = 2;

let server: TestServer;
let original: string;
let joinedAudioVideo: string;
const bytesOf = new Map<string, number>();

const options: OpenSourceOptions = {
  resolution: 720,
  allowPrivate: true,
  maxBytes: 100_000_000,
  deadlineMs: 60_000,
};

/**
 * A 20-second 25 fps H.264 video with B-frames whose every frame differs (moving pattern and
 * noise), keyframes every 2 s, and its HLS VOD copy in fMP4 segments (the same packets).
 */
async function makeVideos(): Promise<{ original: string; hls: string }> {
  const hls = join(DIRECTORY, "hls");
  const source = join(DIRECTORY, "original.mp4");
  if (!existsSync(join(hls, "index.m3u8"))) {
    await mkdir(hls, { recursive: true });
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-f", "lavfi"],
      ...["-i", "testsrc2=size=320x240:rate=25:duration=20,noise=alls=12:allf=t"],
      ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "50"],
      ...["-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", source],
    ]);
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", source, "-c", "copy", "-f", "hls"],
      ...["-hls_time", String(SEGMENT_SECONDS), "-hls_playlist_type", "vod"],
      ...["-hls_segment_type", "fmp4", "-hls_segment_filename", join(hls, "seg%d.m4s")],
      join(hls, "index.m3u8"),
    ]);
  }
  const single = join(DIRECTORY, "hls-single");
  if (!existsSync(join(single, "index.m3u8"))) {
    // One file, each segment a byte range of it (EXT-X-BYTERANGE, the init's too).
    await mkdir(single, { recursive: true });
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", source, "-c", "copy", "-f", "hls"],
      ...["-hls_time", String(SEGMENT_SECONDS), "-hls_playlist_type", "vod"],
      ...["-hls_segment_type", "fmp4", "-hls_flags", "single_file"],
      ...["-hls_fmp4_init_filename", "init.mp4", join(single, "index.m3u8")],
    ]);
  }
  return { original: source, hls };
}

/**
 * A 12-second video with AAC audio cut into fMP4 segments, and the same segments joined into
 * one file: the HLS muxer shifts the timeline (audio priming, B-frame delay), so the stream's own
 * frames at a time are the joined file's, not the original's.
 */
async function makeAudioVideo(): Promise<{ joined: string; hls: string }> {
  const hls = join(DIRECTORY, "hls-av");
  const joined = join(DIRECTORY, "joined-av.mp4");
  if (!existsSync(joined)) {
    await mkdir(hls, { recursive: true });
    const source = join(DIRECTORY, "original-av.mp4");
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-f", "lavfi"],
      ...["-i", "testsrc2=size=320x240:rate=25:duration=12,noise=alls=12:allf=t"],
      ...["-f", "lavfi", "-i", "sine=frequency=440:duration=12"],
      ...["-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-keyint_min", "50"],
      ...["-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", source],
    ]);
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", source, "-c", "copy", "-f", "hls", "-hls_time", "2"],
      ...["-hls_playlist_type", "vod", "-hls_segment_type", "fmp4"],
      ...["-hls_segment_filename", join(hls, "s%d.m4s"), join(hls, "index.m3u8")],
    ]);
    const parts = ["init.mp4", ...[0, 1, 2, 3, 4, 5].map((n) => `s${n}.m4s`)];
    await writeFile(
      joined,
      Buffer.concat(await Promise.all(parts.map((name) => readFile(join(hls, name))))),
    );
  }
  return { joined, hls };
}

beforeAll(async () => {
  const made = await makeVideos();
  original = made.original;
  server = await startTestServer();
  for (const name of await readdir(made.hls)) {
    const path = join(made.hls, name);
    bytesOf.set(name, (await stat(path)).size);
    server.route(
      `/vod/${name}`,
      fileRoute(path, {
        ranges: true,
        contentType: name.endsWith(".m3u8") ? "application/vnd.apple.mpegurl" : "video/mp4",
      }),
    );
  }
  for (const name of await readdir(join(DIRECTORY, "hls-single"))) {
    server.route(
      `/single/${name}`,
      fileRoute(join(DIRECTORY, "hls-single", name), { ranges: true }),
    );
  }
  const av = await makeAudioVideo();
  joinedAudioVideo = av.joined;
  for (const name of await readdir(av.hls)) {
    server.route(`/av/${name}`, fileRoute(join(av.hls, name), { ranges: true }));
  }
  server.route("/vod/master.m3u8", (_req, res) => {
    res
      .writeHead(200, { "content-type": "application/vnd.apple.mpegurl" })
      .end(
        [
          "#EXTM3U",
          '#EXT-X-STREAM-INF:BANDWIDTH=90000,RESOLUTION=160x120,CODECS="avc1.64000d"',
          "missing-low.m3u8",
          '#EXT-X-STREAM-INF:BANDWIDTH=400000,RESOLUTION=320x240,CODECS="avc1.64000d"',
          "index.m3u8",
          '#EXT-X-STREAM-INF:BANDWIDTH=9000000,RESOLUTION=1920x1080,CODECS="avc1.640028"',
          "missing-high.m3u8",
          "",
        ].join("\n"),
      );
  });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe("an HLS VOD link", () => {
  it("gives the original's exact frames at 12 times, fetching only their segments", async () => {
    // Four times in each of segments 2, 5 and 8, one on a segment's very first frame.
    const times = [4.0, 4.52, 5.0, 5.48, 10.08, 10.6, 11.12, 11.44, 16.2, 16.76, 17.0, 17.52];
    const before = server.requests.length;
    const source = await openSource(`${server.origin}/vod/index.m3u8`, "direct", options);
    try {
      // The original's pictures in one run; the source's one run a time, as a job seeks.
      const expected = await picturesAt(["-i", original], [...times, 5.0 + 0.04]);
      for (const [i, seconds] of times.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.length, `${seconds} s`).toBe(320 * 240);
        expect(got.equals(expected[i]), `the frame at ${seconds} s`).toBe(true);
      }
      // The test can fail: the frame after each time differs from the one at it.
      expect(expected[times.length].equals(expected[times.indexOf(5.0)])).toBe(false);
    } finally {
      await source.close();
    }
    const requests = server.requests.slice(before).map((r) => r.url.replace("/vod/", ""));
    const segments = requests.filter((name) => name.endsWith(".m4s"));
    // seg0 for the probe and the three segments the times are in; 4.0 s, a segment's very
    // first frame, is read from its own segment, not the one before.
    expect([...new Set(segments)].sort()).toEqual(["seg0.m4s", "seg2.m4s", "seg5.m4s", "seg8.m4s"]);
    expect(segments.length, "each segment fetched once").toBe(new Set(segments).size);
    const fetched = segments.reduce((sum, name) => sum + (bytesOf.get(name) ?? 0), 0);
    const all = [...bytesOf].filter(([n]) => n.endsWith(".m4s")).reduce((s, [, b]) => s + b, 0);
    expect(fetched).toBeLessThan(all * 0.45);
    expect(source.bytesRead()).toBeLessThan(fetched + 10_000);
  }, 120_000);

  it("reads a master playlist's largest variant within the resolution", async () => {
    const source = await openSource(`${server.origin}/vod/master.m3u8`, "direct", {
      ...options,
      resolution: 480,
    });
    try {
      const got = await pictureAt(safeInputArgs(source.input), 7.2);
      expect(got.equals(await pictureAt(["-i", original], 7.2))).toBe(true);
      expect(source.resolutionNote).toContain("largest version this source offers is 240p");
    } finally {
      await source.close();
    }
  }, 60_000);

  it("with audio, gives the stream's own frames, on and around segment boundaries", async () => {
    const source = await openSource(`${server.origin}/av/index.m3u8`, "direct", options);
    try {
      const times = [0.02, 0.5, 1.98, 2.0, 3.3, 4.0, 5.97, 7.96, 11.2, 11.9];
      const expected = await picturesAt(["-i", joinedAudioVideo], times);
      for (const [i, seconds] of times.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.equals(expected[i]), `the frame at ${seconds} s`).toBe(true);
      }
    } finally {
      await source.close();
    }
  }, 60_000);

  it("reads byte-range segments of one file, each range asked for alone", async () => {
    const before = server.requests.length;
    const source = await openSource(`${server.origin}/single/index.m3u8`, "direct", options);
    try {
      const times = [3.0, 13.48];
      const expected = await picturesAt(["-i", original], times);
      for (const [i, seconds] of times.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.equals(expected[i]), `the frame at ${seconds} s`).toBe(true);
      }
    } finally {
      await source.close();
    }
    const ranges = server.requests
      .slice(before)
      .filter((r) => !r.url.endsWith(".m3u8"))
      .map((r) => r.range);
    // The init, then segments 0, 1 and 6 (one range each), not the whole file.
    expect(ranges).toHaveLength(4);
    expect(ranges.every((range) => /^bytes=\d+-\d+$/.test(range ?? ""))).toBe(true);
  }, 60_000);
});
