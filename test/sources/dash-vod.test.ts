// DASH VOD links (decision 0333): a manifest made by ffmpeg's dash muxer (SegmentTemplate with
// SegmentTimeline, $Number$), one with $Time$, one with @duration and no timeline, one single
// file (SegmentList of byte ranges) and one SegmentBase file (segments from its own sidx): the
// frames read through the relay are the original's, bit for bit, at 12 exact times, and only the
// segments those times lie in are fetched.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
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
const DIRECTORY = join(cacheTmpdir(), "stills-dash-test-v2");
const original = join(DIRECTORY, "original.mp4");
const withAudio = join(DIRECTORY, "audio-video.mp4");

let server: TestServer;
const bytesOf = new Map<string, number>();

const options: OpenSourceOptions = {
  resolution: 720,
  allowPrivate: true,
  maxBytes: 100_000_000,
  deadlineMs: 60_000,
};

async function dash(directory: string, extra: string[]): Promise<void> {
  await mkdir(directory, { recursive: true });
  await run("ffmpeg", [
    ...["-v", "error", "-y", "-i", original, "-c", "copy", "-f", "dash", "-seg_duration", "2"],
    ...extra,
    join(directory, "manifest.mpd"),
  ]);
}

beforeAll(async () => {
  if (!existsSync(join(DIRECTORY, "indexed", "video.mp4"))) {
    await mkdir(DIRECTORY, { recursive: true });
    // 20 s, 25 fps, B-frames, every frame different, a keyframe every 2 s.
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-f", "lavfi"],
      ...["-i", "testsrc2=size=320x240:rate=25:duration=20,noise=alls=12:allf=t"],
      ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "50"],
      ...["-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", original],
    ]);
    await dash(join(DIRECTORY, "timeline"), []);
    await dash(join(DIRECTORY, "plain"), ["-use_timeline", "0"]);
    await dash(join(DIRECTORY, "single"), ["-single_file", "1"]);
    // Audio beside the video: the dash muxer puts it in an adaptation set of its own.
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-f", "lavfi"],
      ...["-i", "testsrc2=size=320x240:rate=25:duration=12,noise=alls=12:allf=t"],
      ...["-f", "lavfi", "-i", "sine=frequency=440:duration=12"],
      ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "50", "-keyint_min", "50"],
      ...["-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", withAudio],
    ]);
    await mkdir(join(DIRECTORY, "av"), { recursive: true });
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", withAudio, "-c", "copy", "-f", "dash", "-seg_duration", "2"],
      join(DIRECTORY, "av", "manifest.mpd"),
    ]);
    // SegmentBase: one fragmented file with a global sidx, described by hand.
    await mkdir(join(DIRECTORY, "indexed"), { recursive: true });
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-i", original, "-c", "copy"],
      ...["-movflags", "frag_keyframe+global_sidx+dash", join(DIRECTORY, "indexed", "video.mp4")],
    ]);
  }
  server = await startTestServer();
  for (const kind of ["timeline", "plain", "single", "indexed", "av"]) {
    for (const name of await readdir(join(DIRECTORY, kind))) {
      const path = join(DIRECTORY, kind, name);
      bytesOf.set(`${kind}/${name}`, (await stat(path)).size);
      server.route(
        `/${kind}/${name}`,
        fileRoute(path, {
          ranges: true,
          contentType: name.endsWith(".mpd") ? "application/dash+xml" : "video/mp4",
        }),
      );
    }
  }
  // $Time$ instead of $Number$: the same segments under their start times.
  const timed = (await readFile(join(DIRECTORY, "timeline", "manifest.mpd"), "utf8")).replace(
    "$Number%05d$",
    "$Time$",
  );
  server.route("/timeline/timed.mpd", (_req, res) =>
    res.writeHead(200, { "content-type": "application/dash+xml" }).end(timed),
  );
  for (let k = 0; k < 10; k += 1) {
    const path = join(DIRECTORY, "timeline", `chunk-stream0-${String(k + 1).padStart(5, "0")}.m4s`);
    server.route(`/timeline/chunk-stream0-${k * 25600}.m4s`, fileRoute(path, { ranges: true }));
  }
  server.route("/indexed/manifest.mpd", (_req, res) =>
    res.writeHead(200, { "content-type": "application/dash+xml" }).end(indexedManifest),
  );
}, 120_000);

let indexedManifest = "";
beforeAll(async () => {
  // The sidx sits right after the moov: find both in the file.
  const file = await readFile(join(DIRECTORY, "indexed", "video.mp4"));
  let at = 0;
  let initEnd = 0;
  let index = "";
  while (at + 8 <= file.length) {
    const size = file.readUInt32BE(at);
    const type = file.toString("latin1", at + 4, at + 8);
    if (type === "moov") initEnd = at + size;
    if (type === "sidx" && index === "") index = `${at}-${at + size - 1}`;
    at += size;
  }
  indexedManifest = `<?xml version="1.0"?>
<!-- written by hand: one file, its segments in its own index -->
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT20S">
  <Period>
    <AdaptationSet mimeType="video/mp4" codecs="avc1.64000d">
      <Representation id="low" bandwidth="90000" width="160" height="120">
        <BaseURL>missing-low.mp4</BaseURL>
        <SegmentBase indexRange="${index}"><Initialization range="0-${initEnd - 1}"/></SegmentBase>
      </Representation>
      <Representation id="v" bandwidth="1500000" width="320" height="240">
        <BaseURL>video.mp4</BaseURL>
        <SegmentBase indexRange="${index}"><Initialization range="0-${initEnd - 1}"/></SegmentBase>
      </Representation>
    </AdaptationSet>
  </Period>
</MPD>`;
});

afterAll(async () => {
  await server?.close();
});

async function framesMatch(path: string, times: number[]) {
  const before = server.requests.length;
  const source = await openSource(`${server.origin}${path}`, "direct", options);
  try {
    // The original's pictures in one run; the source's one run a time, as a job seeks.
    const expected = await picturesAt(["-i", original], times);
    for (const [i, seconds] of times.entries()) {
      const got = await pictureAt(safeInputArgs(source.input), seconds);
      expect(got.length, `${seconds} s`).toBe(320 * 240);
      expect(got.equals(expected[i]), `the frame at ${seconds} s`).toBe(true);
    }
  } finally {
    await source.close();
  }
  return { requests: server.requests.slice(before), source };
}

describe("a DASH VOD link", () => {
  it("SegmentTemplate with SegmentTimeline: 12 exact frames, only their segments", async () => {
    // Four times in each of segments 2, 5 and 8 ($Number$ 3, 6 and 9), one on a first frame.
    const times = [4.0, 4.52, 5.0, 5.48, 10.08, 10.6, 11.12, 11.44, 16.2, 16.76, 17.0, 17.52];
    const { requests, source } = await framesMatch("/timeline/manifest.mpd", times);
    const segments = requests.map((r) => r.url).filter((url) => url.includes("chunk-"));
    expect([...new Set(segments)].sort()).toEqual(
      [1, 3, 6, 9].map((n) => `/timeline/chunk-stream0-0000${n}.m4s`),
    );
    expect(segments.length, "each segment fetched once").toBe(new Set(segments).size);
    const fetched = segments.reduce((sum, url) => sum + (bytesOf.get(url.slice(1)) ?? 0), 0);
    const all = [...bytesOf]
      .filter(([name]) => name.startsWith("timeline/chunk-"))
      .reduce((sum, [, bytes]) => sum + bytes, 0);
    expect(fetched).toBeLessThan(all * 0.45);
    expect(source.bytesRead()).toBeLessThan(fetched + 10_000);
  }, 120_000);

  it("$Time$ names segments by their start", async () => {
    const { requests } = await framesMatch("/timeline/timed.mpd", [7.2, 13.48]);
    const segments = requests.map((r) => r.url).filter((url) => url.includes("chunk-"));
    expect([...new Set(segments)].sort()).toEqual(
      ["0", "153600", "76800"].map((t) => `/timeline/chunk-stream0-${t}.m4s`),
    );
  }, 60_000);

  it("SegmentTemplate with @duration and no timeline", async () => {
    const { requests } = await framesMatch("/plain/manifest.mpd", [3.0, 19.96]);
    const segments = requests.map((r) => r.url).filter((url) => url.includes("chunk-"));
    expect([...new Set(segments)].sort()).toEqual(
      [1, 2, 10].map((n) => `/plain/chunk-stream0-${String(n).padStart(5, "0")}.m4s`),
    );
  }, 60_000);

  it("SegmentList of byte ranges of one file, each range asked for alone", async () => {
    const { requests } = await framesMatch("/single/manifest.mpd", [3.0, 13.48]);
    const ranges = requests.filter((r) => r.url.endsWith(".mp4")).map((r) => r.range);
    // The init, then segments 0, 1 and 6.
    expect(ranges).toHaveLength(4);
    expect(ranges.every((range) => /^bytes=\d+-\d+$/.test(range ?? ""))).toBe(true);
  }, 60_000);

  it("SegmentBase: the representation within the resolution, its segments from its sidx", async () => {
    const { requests } = await framesMatch("/indexed/manifest.mpd", [3.0, 13.48]);
    const asked = requests.filter((r) => r.url.startsWith("/indexed/") && !r.url.endsWith(".mpd"));
    expect(asked.every((r) => r.url === "/indexed/video.mp4")).toBe(true);
    // The init, the sidx, then segments 0, 1 and 6: ranges, never the whole file.
    expect(asked).toHaveLength(5);
    expect(asked.every((r) => /^bytes=\d+-\d+$/.test(r.range ?? ""))).toBe(true);
  }, 60_000);

  it("with an audio adaptation set beside it, the video's frames and only its segments", async () => {
    const before = server.requests.length;
    const source = await openSource(`${server.origin}/av/manifest.mpd`, "direct", options);
    try {
      const times = [0, 1.96, 2.0, 7.96, 11.2];
      const expected = await picturesAt(["-i", withAudio], times);
      for (const [i, seconds] of times.entries()) {
        const got = await pictureAt(safeInputArgs(source.input), seconds);
        expect(got.equals(expected[i]), `${seconds} s`).toBe(true);
      }
    } finally {
      await source.close();
    }
    const asked = server.requests.slice(before).map((r) => r.url);
    expect(asked.filter((url) => url.includes("stream1"))).toEqual([]);
  }, 60_000);
});
