// HLS VOD links with MPEG-TS segments (decision 0332): each segment is remuxed alone to a
// fragment placed on the playlist's timeline, so the frames read through the relay are the
// original file's, bit for bit, at 12 exact times, and only the segments those times lie in (and
// the first, which sets the clock) are fetched. A playlist that joins two encodes with
// EXT-X-DISCONTINUITY gives the second encode's frames from its EXTINF start.
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
const DIRECTORY = join(cacheTmpdir(), "stills-hls-ts-test-v2");

let server: TestServer;
const bytesOf = new Map<string, number>();

const options: OpenSourceOptions = {
  resolution: 720,
  allowPrivate: true,
  maxBytes: 100_000_000,
  deadlineMs: 60_000,
};

/** A video whose every frame differs (moving pattern and noise), with B-frames. */
async function encode(path: string, pattern: string, seconds: number): Promise<void> {
  await run("ffmpeg", [
    ...["-v", "error", "-y", "-f", "lavfi"],
    ...["-i", `${pattern}=size=320x240:rate=25:duration=${seconds},noise=alls=12:allf=t`],
    ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "50"],
    ...["-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", path],
  ]);
}

/** ffmpeg's hls muxer with MPEG-TS segments (its default kind): PTS start at 1.4 s. */
async function segment(source: string, directory: string, prefix: string): Promise<void> {
  await mkdir(directory, { recursive: true });
  await run("ffmpeg", [
    ...["-v", "error", "-y", "-i", source, "-c", "copy", "-f", "hls", "-hls_time", "2"],
    ...["-hls_playlist_type", "vod", "-hls_segment_type", "mpegts"],
    ...["-hls_segment_filename", join(directory, `${prefix}%d.ts`), join(directory, "index.m3u8")],
  ]);
}

const original = join(DIRECTORY, "original.mp4");
const second = join(DIRECTORY, "second.mp4");
const withAudio = join(DIRECTORY, "audio-video.mp4");

beforeAll(async () => {
  const hls = join(DIRECTORY, "hls");
  if (!existsSync(join(hls, "index.m3u8"))) {
    await mkdir(DIRECTORY, { recursive: true });
    await encode(original, "testsrc2", 20);
    await segment(original, hls, "seg");
    await encode(second, "testsrc", 6);
    await segment(second, join(DIRECTORY, "second"), "b");
    // AAC beside the video: in the TS its first PTS (1.457 s) is before the video's (1.48 s).
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-f", "lavfi"],
      ...["-i", "testsrc2=size=320x240:rate=25:duration=12,noise=alls=12:allf=t"],
      ...["-f", "lavfi", "-i", "sine=frequency=440:duration=12"],
      ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "50", "-keyint_min", "50"],
      ...["-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", withAudio],
    ]);
    await segment(withAudio, join(DIRECTORY, "av"), "s");
  }
  server = await startTestServer();
  for (const name of await readdir(join(DIRECTORY, "av"))) {
    server.route(`/av/${name}`, fileRoute(join(DIRECTORY, "av", name), { ranges: true }));
  }
  for (const name of await readdir(hls)) {
    bytesOf.set(name, (await stat(join(hls, name))).size);
    server.route(
      `/ts/${name}`,
      fileRoute(join(hls, name), { ranges: true, contentType: "video/mp2t" }),
    );
  }
  for (const name of await readdir(join(DIRECTORY, "second"))) {
    server.route(`/second/${name}`, fileRoute(join(DIRECTORY, "second", name), { ranges: true }));
  }
  // Segments 0-2 of the first encode, then the second encode whole: its clock starts again.
  const first = (await readFile(join(hls, "index.m3u8"), "utf8")).split("seg3.ts")[0];
  const rest = (await readFile(join(DIRECTORY, "second", "index.m3u8"), "utf8"))
    .split("\n")
    .filter(
      (line) => line.startsWith("#EXTINF") || line.startsWith("b") || line === "#EXT-X-ENDLIST",
    )
    .map((line) => (line.startsWith("b") ? `/second/${line}` : line));
  const joined = `${first.replace(/#EXTINF:[^\n]*\n$/, "")}#EXT-X-DISCONTINUITY\n${rest.join("\n")}\n`;
  await writeFile(join(DIRECTORY, "joined.m3u8"), joined);
  server.route("/ts/joined.m3u8", fileRoute(join(DIRECTORY, "joined.m3u8"), { ranges: true }));
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe("an HLS VOD link with MPEG-TS segments", () => {
  it("gives the original's exact frames at 12 times, fetching only their segments", async () => {
    // The TS timestamps start at 1.48 s (1.4 s muxer delay, then the B-frame delay); the
    // playlist's 0 is the first frame. Four times in each of segments 2, 5 and 8, one on a
    // segment's very first frame. (A time on a segment's last frame reads the next segment too: the
    // decoder holds that frame back until more packets come.)
    const times = [4.0, 4.52, 5.0, 5.48, 10.08, 10.6, 11.12, 11.44, 16.2, 16.76, 17.0, 17.52];
    const before = server.requests.length;
    const source = await openSource(`${server.origin}/ts/index.m3u8`, "direct", options);
    try {
      // The original's pictures in one run; the source's one run a time, as a job seeks.
      const expected = await picturesAt(["-i", original], [...times, 5.0 + 0.04]);
      for (const [i, seconds] of times.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.length, `${seconds} s`).toBe(320 * 240);
        expect(got.equals(expected[i]), `the frame at ${seconds} s`).toBe(true);
      }
      // The view's clock is the playlist's: its first frame at 0, not at the TS's 1.48 s.
      const { stdout: start } = await run("ffprobe", [
        ...["-v", "error", ...safeInputArgs(source.input).slice(0, -2)],
        ...["-show_entries", "stream=start_time", "-of", "csv=p=0", source.input],
      ]);
      expect(start.trim()).toBe("0.000000");
      // The test can fail: the frame after each time differs from the one at it.
      expect(expected[times.length].equals(expected[times.indexOf(5.0)])).toBe(false);
    } finally {
      await source.close();
    }
    const requests = server.requests.slice(before).map((r) => r.url.replace("/ts/", ""));
    const segments = requests.filter((name) => name.endsWith(".ts"));
    expect([...new Set(segments)].sort()).toEqual(["seg0.ts", "seg2.ts", "seg5.ts", "seg8.ts"]);
    expect(segments.length, "each segment fetched once").toBe(new Set(segments).size);
    const fetched = segments.reduce((sum, name) => sum + (bytesOf.get(name) ?? 0), 0);
    const all = [...bytesOf].filter(([n]) => n.endsWith(".ts")).reduce((s, [, b]) => s + b, 0);
    expect(fetched).toBeLessThan(all * 0.45);
    expect(source.bytesRead()).toBeLessThan(fetched + 10_000);
  }, 120_000);

  it("reads every segment in turn, each frame where the original has it", async () => {
    const source = await openSource(`${server.origin}/ts/index.m3u8`, "direct", options);
    try {
      const { stdout } = await run(
        "ffmpeg",
        [...["-v", "error", ...safeInputArgs(source.input)], "-f", "framemd5", "-"],
        { maxBuffer: 16 * 1024 * 1024 },
      );
      const { stdout: expected } = await run(
        "ffmpeg",
        ["-v", "error", "-i", original, "-f", "framemd5", "-"],
        { maxBuffer: 16 * 1024 * 1024 },
      );
      const rows = (text: string) => text.split("\n").filter((line) => /^0,/.test(line));
      expect(rows(stdout)).toHaveLength(500);
      expect(rows(stdout)).toEqual(rows(expected));
    } finally {
      await source.close();
    }
  }, 120_000);

  it("after EXT-X-DISCONTINUITY, a new clock starts at its EXTINF time", async () => {
    const source = await openSource(`${server.origin}/ts/joined.m3u8`, "direct", options);
    try {
      const first = [1.0, 5.96];
      const fromFirst = await picturesAt(["-i", original], first);
      for (const [i, seconds] of first.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.equals(fromFirst[i]), `${seconds} s`).toBe(true);
      }
      // The second encode begins at 6 s (three 2-second segments before it).
      const then = [6.0, 7.28, 11.96];
      const fromSecond = await picturesAt(
        ["-i", second],
        then.map((seconds) => seconds - 6),
      );
      for (const [i, seconds] of then.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.equals(fromSecond[i]), `${seconds} s`).toBe(true);
      }
    } finally {
      await source.close();
    }
  }, 120_000);

  it("with audio that starts first, 0 is still the first frame: the original's frames", async () => {
    const source = await openSource(`${server.origin}/av/index.m3u8`, "direct", options);
    try {
      const { stdout: start } = await run("ffprobe", [
        ...["-v", "error", ...safeInputArgs(source.input).slice(0, -2)],
        ...["-show_entries", "stream=start_time", "-of", "csv=p=0", source.input],
      ]);
      expect(start.trim()).toBe("0.000000");
      const times = [0, 1.96, 2.0, 3.3, 4.0, 7.96, 11.2];
      const expected = await picturesAt(["-i", withAudio], times);
      for (const [i, seconds] of times.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.equals(expected[i]), `${seconds} s`).toBe(true);
      }
    } finally {
      await source.close();
    }
  }, 120_000);
});
