// An HLS (.m3u8) link through the whole stack (issue 40, decision 0330): a timestamps job
// delivers the frames on screen at its times and reads no segment past the last; a mode that
// needs the whole video (every) reads them all and still delivers the right frames.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTestVideo, readImagePattern, VIDEO_CACHE_DIR } from "../support/videos.ts";
import { call, download, type Harness, startHarness } from "./support/harness.ts";

const run = promisify(execFile);
const FPS = 30;

let h: Harness;
let playlist: string;
let tsPlaylist: string;
const segmentNames: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  const video = await makeTestVideo({ durationSeconds: 24, fps: FPS, gop: 60, grain: true });
  // The same packets cut into 2-second fMP4 segments by ffmpeg's HLS muxer.
  const directory = join(VIDEO_CACHE_DIR, "hls-e2e-v2");
  if (!existsSync(join(directory, "index.m3u8"))) {
    await mkdir(directory, { recursive: true });
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", video, "-c", "copy", "-f", "hls", "-hls_time", "2"],
      ...["-hls_playlist_type", "vod", "-hls_segment_type", "fmp4"],
      ...["-hls_segment_filename", join(directory, "seg%d.m4s"), join(directory, "index.m3u8")],
    ]);
  }
  for (const name of await readdir(directory)) {
    if (name.endsWith(".m4s")) segmentNames.push(name);
    const type = name.endsWith(".m3u8") ? "application/vnd.apple.mpegurl" : "video/mp4";
    const url = h.serveVideo(`/hls/${name}`, join(directory, name), type);
    if (name === "index.m3u8") playlist = url;
  }
  // And in MPEG-TS segments, ffmpeg's HLS default (decision 0332): their PTS start at 1.4 s.
  const tsDirectory = join(VIDEO_CACHE_DIR, "hls-ts-e2e-v1");
  if (!existsSync(join(tsDirectory, "index.m3u8"))) {
    await mkdir(tsDirectory, { recursive: true });
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", video, "-c", "copy", "-f", "hls", "-hls_time", "2"],
      ...["-hls_playlist_type", "vod", "-hls_segment_type", "mpegts"],
      ...["-hls_segment_filename", join(tsDirectory, "seg%d.ts"), join(tsDirectory, "index.m3u8")],
    ]);
  }
  for (const name of await readdir(tsDirectory)) {
    const type = name.endsWith(".m3u8") ? "application/vnd.apple.mpegurl" : "video/mp2t";
    const url = h.serveVideo(`/hls-ts/${name}`, join(tsDirectory, name), type);
    if (name === "index.m3u8") tsPlaylist = url;
  }
});

afterAll(async () => {
  await h?.close();
});

const segmentsAsked = (since: number) =>
  new Set(
    h.videos.requests
      .slice(since)
      .map((r) => r.url)
      .filter((url) => url.endsWith(".m4s"))
      .map((url) => url.replace("/hls/", "")),
  );

it("a timestamps job on an .m3u8 link gets the exact frames and reads nothing past them", async () => {
  const account = await h.newKey("starter");
  const times = [1.5, 9.25, 17.5];
  const before = h.videos.requests.length;
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: playlist, timestamps: times, resolution: 360 },
    headers: account.auth,
  });
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect(job.body.platform).toBe("direct");
  expect(job.body.status, JSON.stringify(job.body.error)).toBe("completed");
  expect(job.body.duration_seconds).toBeCloseTo(24, 1);
  for (const [i, frame] of job.body.frames.entries()) {
    const shown = (await readImagePattern((await download(frame.url)).bytes)).number;
    // The frame on screen at the asked time: frame n is shown from n/30 s.
    expect(shown, `frame at ${times[i]} s`).toBe(Math.floor(times[i] * FPS + 1e-6));
    expect(frame.pts).toBeCloseTo((shown as number) / FPS, 3);
  }
  // Of the 12 segments, the three the times fall in are read, and none after the last time's:
  // for a short small video the job decodes in one run from the start rather than seeking
  // (extractor/strategy.ts), so the segments up to seg8 are read in turn and the run stops there.
  // Seeks reading only their own segments are shown in test/sources/hls-vod.test.ts.
  const asked = segmentsAsked(before);
  for (const name of ["seg0.m4s", "seg4.m4s", "seg8.m4s"]) expect(asked).toContain(name);
  for (const name of ["seg9.m4s", "seg10.m4s", "seg11.m4s"]) expect(asked).not.toContain(name);
  expect(job.body.credits_charged).toBeGreaterThan(0);
});

it("an every job on an .m3u8 link reads every segment and delivers each frame", async () => {
  const account = await h.newKey("starter");
  const before = h.videos.requests.length;
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: playlist, every: 2, resolution: 360 },
    headers: account.auth,
  });
  expect(job.body.status, JSON.stringify(job.body.error)).toBe("completed");
  expect(job.body.frames.map((f: { timestamp: number }) => f.timestamp)).toEqual([
    0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
  ]);
  for (const frame of job.body.frames) {
    const shown = (await readImagePattern((await download(frame.url)).bytes)).number;
    expect(shown, `frame at ${frame.timestamp} s`).toBe(Math.round(frame.timestamp * FPS));
  }
  expect(segmentsAsked(before).size).toBeGreaterThanOrEqual(11);
  expect(segmentNames).toHaveLength(12);
});

it("a timestamps job on an .m3u8 link of MPEG-TS segments gets the exact frames", async () => {
  const account = await h.newKey("starter");
  const times = [0, 1.5, 9.25, 17.5];
  const before = h.videos.requests.length;
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: tsPlaylist, timestamps: times, resolution: 360 },
    headers: account.auth,
  });
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect(job.body.status, JSON.stringify(job.body.error)).toBe("completed");
  expect(job.body.duration_seconds).toBeCloseTo(24, 1);
  for (const [i, frame] of job.body.frames.entries()) {
    const shown = (await readImagePattern((await download(frame.url)).bytes)).number;
    // The playlist's times, not the TS's (which start at 1.4 s): frame n is shown from n/30 s.
    expect(shown, `frame at ${times[i]} s`).toBe(Math.floor(times[i] * FPS + 1e-6));
    expect(frame.pts).toBeCloseTo((shown as number) / FPS, 3);
  }
  const asked = new Set(
    h.videos.requests
      .slice(before)
      .map((r) => r.url)
      .filter((url) => url.startsWith("/hls-ts/seg")),
  );
  for (const n of [0, 4, 8]) expect(asked).toContain(`/hls-ts/seg${n}.ts`);
  for (const n of [9, 10, 11]) expect(asked).not.toContain(`/hls-ts/seg${n}.ts`);
  expect(job.body.credits_charged).toBeGreaterThan(0);
});

it("an every job on an .m3u8 link of MPEG-TS segments reads them all, each frame at its time", async () => {
  const account = await h.newKey("starter");
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: tsPlaylist, every: 4, resolution: 360 },
    headers: account.auth,
  });
  expect(job.body.status, JSON.stringify(job.body.error)).toBe("completed");
  expect(job.body.frames.map((f: { timestamp: number }) => f.timestamp)).toEqual([
    0, 4, 8, 12, 16, 20,
  ]);
  for (const frame of job.body.frames) {
    const shown = (await readImagePattern((await download(frame.url)).bytes)).number;
    expect(shown, `frame at ${frame.timestamp} s`).toBe(Math.round(frame.timestamp * FPS));
  }
});
