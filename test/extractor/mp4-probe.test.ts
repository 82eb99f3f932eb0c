// The probe from an MP4's own index (extractor/ffmpeg/mp4-probe.ts, decision 0286) against
// ffprobe's (the run it replaces), field by field, on real encoded files; and every shape it
// does not read left to ffprobe.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { openByteReader } from "../../extractor/ffmpeg/mp4-index.ts";
import { probeFromMp4 } from "../../extractor/ffmpeg/mp4-probe.ts";
import { probeMedia, probeWithFfprobe } from "../../extractor/ffmpeg/probe.ts";
import { fileRoute, startTestServer } from "../sources/support/servers.ts";
import { makeTestVideo, type TestVideoSpec } from "../support/videos.ts";

const run = promisify(execFile);

async function fromIndex(video: string) {
  const reader = await openByteReader(video);
  if (!reader) throw new Error("no reader");
  try {
    return await probeFromMp4(reader.read, reader.size);
  } finally {
    await reader.close();
  }
}

async function remux(video: string, name: string, args: string[]): Promise<string> {
  const out = join(await mkdtemp(join(tmpdir(), "stills-mp4-probe-")), name);
  await run("ffmpeg", ["-v", "error", "-i", video, "-c", "copy", ...args, out]);
  return out;
}

describe("the probe from an MP4's index", () => {
  const plain: [string, TestVideoSpec][] = [
    ["H.264 without B-frames", { fps: 30, gop: 60, bframes: 0, durationSeconds: 4 }],
    ["H.264 with B-frames (an edit skips their delay)", { fps: 30, gop: 60, bframes: 2 }],
    ["25 fps, audio beside", { fps: 25, gop: 37, bframes: 3, durationSeconds: 3, audio: true }],
    ["29.97 fps, 2.5 s", { fps: "30000/1001", bframes: 2, durationSeconds: 2.5 }],
    ["turned 90°", { rotation: 90, bframes: 2 }],
    ["turned 180°", { rotation: 180 }],
    ["turned 270°", { rotation: 270, bframes: 1 }],
    ["QuickTime .mov", { fps: 24, gop: 50, bframes: 1, container: "mov" }],
    ["1080p", { width: 1920, height: 1080, durationSeconds: 1 }],
    ["an odd size (cropped macroblocks)", { width: 202, height: 114, bframes: 2 }],
  ];

  it.each(plain)("%s: every field as ffprobe says it", async (_, spec) => {
    const video = await makeTestVideo(spec);
    const mine = await fromIndex(video);
    const theirs = await probeWithFfprobe(video);
    expect(mine).not.toBeNull();
    const { bytesPerSecond: myRate, ...myRest } = mine ?? {};
    const { bytesPerSecond: theirRate, ...theirRest } = theirs;
    expect(myRest).toEqual(theirRest);
    // A hint for the relay's reads (decode.ts expectedReadBytes): near, not exact.
    expect(myRate).toBeGreaterThan((theirRate ?? 0) * 0.97);
    expect(myRate).toBeLessThan((theirRate ?? 0) * 1.03);
  });

  it("faststart reads alike, and over the loopback relay's HTTP as from the file", async () => {
    const video = await makeTestVideo({ fps: 30, gop: 60, bframes: 2 });
    const front = await remux(video, "front.mp4", ["-movflags", "+faststart"]);
    expect(await fromIndex(front)).toEqual(await fromIndex(video));
    const server = await startTestServer();
    server.route("/v.mp4", fileRoute(front, { ranges: true }));
    try {
      const over = await probeMedia(`${server.origin}/v.mp4`);
      expect(over).toEqual(await fromIndex(front));
    } finally {
      await server.close();
    }
  });

  const others: [string, TestVideoSpec][] = [
    ["a video that starts at 1.5 s", { bframes: 2, startTime: 1.5 }],
    ["variable frame rate", { fps: 30, gop: 30, durationSeconds: 4, variableFrameRate: true }],
    ["HEVC", { codec: "hevc", bframes: 2 }],
    ["10-bit H.264", { pixelFormat: "yuv420p10le" }],
    ["HDR (PQ)", { hdr: "pq" }],
    ["Matroska", { container: "mkv" }],
    ["WebM", { container: "webm", codec: "vp9" }],
  ];

  it.each(others)("%s: left to ffprobe, whose answer probeMedia gives", async (_, spec) => {
    const video = await makeTestVideo(spec);
    expect(await fromIndex(video)).toBeNull();
    expect(await probeMedia(video)).toEqual(await probeWithFfprobe(video));
  });

  it("left to ffprobe: fragments, subtitles, a colr box, cover art, a timecode track", async () => {
    const video = await makeTestVideo({ bframes: 2, audio: true });
    const dir = await mkdtemp(join(tmpdir(), "stills-mp4-probe-"));
    const fragmented = await remux(video, "frag.mp4", ["-movflags", "frag_keyframe+empty_moov"]);
    expect(await fromIndex(fragmented)).toBeNull();
    // Subtitles: a mov_text track beside the video, which only ffprobe lists.
    const srt = join(dir, "s.srt");
    await writeFile(srt, "1\n00:00:00,000 --> 00:00:01,000\nhi\n");
    const subtitled = join(dir, "subs.mp4");
    await run("ffmpeg", [
      ...["-v", "error", "-i", video, "-i", srt, "-map", "0", "-map", "1"],
      ...["-c", "copy", "-c:s", "mov_text", subtitled],
    ]);
    expect(await fromIndex(subtitled)).toBeNull();
    expect((await probeMedia(subtitled)).subtitles).toHaveLength(1);
    // Colour stated in a colr box: ffprobe reads it.
    const colr = await remux(video, "colr.mp4", [
      ...["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"],
      ...["-movflags", "+write_colr"],
    ]);
    expect(await fromIndex(colr)).toBeNull();
    // Cover art: a stream of its own (attached_pic).
    const png = join(dir, "cover.png");
    await run("ffmpeg", [
      "-v",
      "error",
      "-f",
      "lavfi",
      "-i",
      "color=red:s=64x64",
      "-frames:v",
      "1",
      png,
    ]);
    const covered = join(dir, "cover.mp4");
    await run("ffmpeg", [
      ...["-v", "error", "-i", video, "-i", png, "-map", "0", "-map", "1", "-c", "copy"],
      ...["-disposition:v:1", "attached_pic", covered],
    ]);
    expect(await fromIndex(covered)).toBeNull();
    expect((await probeMedia(covered)).video?.streamIndex).toBe(0);
    // An edit that ends before the frames do: ffmpeg's duration is the edit's.
    const trimmed = Buffer.from(await readFile(video));
    const elst = trimmed.indexOf("elst", 0, "latin1");
    const segment = elst + 4 + 4 + 4;
    trimmed.writeUInt32BE(trimmed.readUInt32BE(segment) - 500, segment);
    const cut = join(dir, "trimmed.mp4");
    await writeFile(cut, trimmed);
    expect(await fromIndex(cut)).toBeNull();
    // A timecode track (tmcd).
    const timecode = await remux(video, "tmcd.mov", ["-timecode", "00:00:01:00"]);
    expect(await fromIndex(timecode)).toBeNull();
  });
});
