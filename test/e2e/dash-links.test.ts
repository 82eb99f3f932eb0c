// A DASH (.mpd) link through the whole stack (issue 40, decision 0333): a timestamps job on a
// manifest made by ffmpeg's dash muxer delivers the frames on screen at its times, from the
// representation within the requested resolution, and reads no segment past the last time.
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
let manifest: string;

beforeAll(async () => {
  h = await startHarness();
  const video = await makeTestVideo({ durationSeconds: 24, fps: FPS, gop: 60, grain: true });
  // The same packets cut into 2-second segments by ffmpeg's DASH muxer (SegmentTemplate with
  // SegmentTimeline, $Number$), beside a 160x120 rendition of its own.
  const directory = join(VIDEO_CACHE_DIR, "dash-e2e-v1");
  if (!existsSync(join(directory, "manifest.mpd"))) {
    await mkdir(directory, { recursive: true });
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", video, "-map", "0:v:0", "-map", "0:v:0"],
      ...["-c:v:0", "copy", "-c:v:1", "libx264", "-s:v:1", "160x120", "-g:v:1", "60"],
      ...["-preset", "veryfast", "-f", "dash", "-seg_duration", "2"],
      ...["-adaptation_sets", "id=0,streams=v", join(directory, "manifest.mpd")],
    ]);
  }
  for (const name of await readdir(directory)) {
    const type = name.endsWith(".mpd") ? "application/dash+xml" : "video/mp4";
    const url = h.serveVideo(`/dash/${name}`, join(directory, name), type);
    if (name === "manifest.mpd") manifest = url;
  }
});

afterAll(async () => {
  await h?.close();
});

it("a timestamps job on an .mpd link gets the exact frames and reads nothing past them", async () => {
  const account = await h.newKey("starter");
  const times = [0, 1.5, 9.25, 17.5];
  const before = h.videos.requests.length;
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: manifest, timestamps: times, resolution: 360 },
    headers: account.auth,
  });
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect(job.body.platform).toBe("direct");
  expect(job.body.status, JSON.stringify(job.body.error)).toBe("completed");
  expect(job.body.duration_seconds).toBeCloseTo(24, 1);
  for (const [i, frame] of job.body.frames.entries()) {
    const image = await readImagePattern((await download(frame.url)).bytes);
    // The frame on screen at the asked time: frame n is shown from n/30 s.
    expect(image.number, `frame at ${times[i]} s`).toBe(Math.floor(times[i] * FPS + 1e-6));
    expect(frame.pts).toBeCloseTo((image.number as number) / FPS, 3);
  }
  const asked = h.videos.requests
    .slice(before)
    .map((r) => r.url)
    .filter((url) => url.startsWith("/dash/chunk-"));
  // Only the full-size representation (stream 0), and nothing past the last time's segment 9.
  expect(asked.length).toBeGreaterThan(0);
  expect(asked.every((url) => url.startsWith("/dash/chunk-stream0-"))).toBe(true);
  for (const n of [1, 5, 9]) expect(asked).toContain(`/dash/chunk-stream0-0000${n}.m4s`);
  for (const n of [10, 11, 12]) {
    expect(asked).not.toContain(`/dash/chunk-stream0-${String(n).padStart(5, "0")}.m4s`);
  }
  expect(job.body.credits_charged).toBeGreaterThan(0);
});
