// Keyframes from an MP4's own index (extractor/ffmpeg/mp4-index.ts) against what ffprobe answers
// (the lookups it replaces): the keyframe before each time, and mode keyframes' whole list, on
// real encoded files.
import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { keyframeProbeArgs } from "../../extractor/ffmpeg/args.ts";
import {
  keyframeListArgs,
  listKeyframes,
  parseKeyframeList,
} from "../../extractor/ffmpeg/keyframes.ts";
import type { KeyframeRow } from "../../extractor/ffmpeg/mp4-index.ts";
import {
  type ByteReader,
  keyframesFromMp4,
  keyframeTicksFromMp4,
  moovOf,
  mp4IndexFrom,
  mp4IndexOfMoov,
  openByteReader,
} from "../../extractor/ffmpeg/mp4-index.ts";
import { probeFromMp4 } from "../../extractor/ffmpeg/mp4-probe.ts";
import { parseKeyframeRows, probeKeyframesAt, probeMedia } from "../../extractor/ffmpeg/probe.ts";
import { fileRoute, startTestServer } from "../sources/support/servers.ts";
import { makeTestVideo, type TestVideoSpec } from "../support/videos.ts";

const run = promisify(execFile);

/** Times every 0.173 s (landing on, just before and just after keyframes) over 19.9 s. */
const TIMES = Array.from({ length: 115 }, (_, i) => Math.round((0.01 + i * 0.173) * 1e6) / 1e6);

async function fromFfprobe(video: string, times: number[]): Promise<(KeyframeRow | null)[]> {
  const { stdout } = await run("ffprobe", keyframeProbeArgs(video, "v:0", times));
  return parseKeyframeRows(stdout, times.length);
}

async function fromIndex(video: string, times: number[]) {
  const reader = await openByteReader(video);
  if (!reader) throw new Error("no reader");
  try {
    return await keyframesFromMp4(reader.read, reader.size, times);
  } finally {
    await reader.close();
  }
}

async function remux(video: string, name: string, flags: string): Promise<string> {
  const out = join(await mkdtemp(join(tmpdir(), "stills-mp4-index-")), name);
  await run("ffmpeg", ["-v", "error", "-i", video, "-c", "copy", "-movflags", flags, out]);
  return out;
}

describe("keyframes from an MP4's index", () => {
  const exact: [string, TestVideoSpec][] = [
    ["H.264 without B-frames", { fps: 30, gop: 60, bframes: 0, durationSeconds: 20 }],
    [
      "H.264 with B-frames (an edit skips their delay)",
      { fps: 30, gop: 60, bframes: 2, durationSeconds: 20 },
    ],
    [
      "25 fps, a GOP of 37, audio beside",
      { fps: 25, gop: 37, bframes: 3, durationSeconds: 20, audio: true },
    ],
    [
      "a video that starts at 1.5 s",
      { fps: 30, gop: 45, bframes: 2, durationSeconds: 20, startTime: 1.5 },
    ],
    ["QuickTime .mov", { fps: 24, gop: 50, bframes: 1, durationSeconds: 20, container: "mov" }],
  ];

  it.each(exact)(
    "%s: the keyframe, its time and size, as ffprobe's lookup finds them",
    async (_, spec) => {
      const video = await makeTestVideo(spec);
      const mine = await fromIndex(video, TIMES);
      expect(mine).not.toBeNull();
      const theirs = await fromFfprobe(video, TIMES);
      expect(theirs.every((row) => row !== null)).toBe(true);
      for (const [i, row] of theirs.entries()) {
        expect(mine?.[i].streamIndex).toBe(row?.streamIndex);
        expect(mine?.[i].keyframe).toBeCloseTo(row?.keyframe ?? Number.NaN, 5);
        expect(mine?.[i].bytes).toBe(row?.bytes);
      }
    },
  );

  it("faststart and moov-at-end read alike; a fragmented file is left to ffprobe", async () => {
    const video = await makeTestVideo({ fps: 30, gop: 60, bframes: 2, durationSeconds: 20 });
    const front = await remux(video, "front.mp4", "+faststart");
    expect(await fromIndex(front, TIMES)).toEqual(await fromIndex(video, TIMES));
    const fragmented = await remux(video, "frag.mp4", "frag_keyframe+empty_moov");
    expect(await fromIndex(fragmented, TIMES)).toBeNull();
  });

  it("where ffmpeg's seek differs (variable frame rate, HEVC), never a later keyframe", async () => {
    for (const spec of [
      { fps: 30, gop: 30, durationSeconds: 20, variableFrameRate: true },
      { fps: 30, gop: 60, bframes: 2, durationSeconds: 20, codec: "hevc" as const },
    ]) {
      const video = await makeTestVideo(spec);
      const mine = await fromIndex(video, TIMES);
      const theirs = await fromFfprobe(video, TIMES);
      let same = 0;
      for (const [i, row] of theirs.entries()) {
        const keyframe = mine?.[i].keyframe ?? Number.POSITIVE_INFINITY;
        expect(keyframe).toBeLessThanOrEqual((row?.keyframe ?? 0) + 1e-6);
        if (Math.abs(keyframe - (row?.keyframe ?? 0)) < 1e-6) same++;
      }
      expect(same).toBeGreaterThan(TIMES.length * 0.9);
    }
  });

  it("stops at the first bytes of a file that is not ISO/QuickTime (Matroska, WebM)", async () => {
    for (const container of ["mkv", "webm"] as const) {
      const video = await makeTestVideo({
        durationSeconds: 4,
        container,
        codec: container === "webm" ? "vp9" : "h264",
      });
      const reader = await openByteReader(video);
      if (!reader) throw new Error("no reader");
      const reads: number[] = [];
      const counted: ByteReader = (start, length) => {
        reads.push(start);
        return reader.read(start, length);
      };
      expect(await keyframesFromMp4(counted, reader.size, [1, 2])).toBeNull();
      await reader.close();
      expect(reads).toEqual([0]);
    }
  });

  it("refuses tables that claim more samples than the file has, without expanding them", async () => {
    const video = await makeTestVideo({ fps: 30, gop: 60, bframes: 2, durationSeconds: 20 });
    const file = await readFile(video);
    const fromBuffer =
      (bytes: Buffer): ByteReader =>
      async (start, length) =>
        bytes.subarray(start, start + length);
    expect(await keyframesFromMp4(fromBuffer(file), file.length, [1])).not.toBeNull();
    for (const table of ["stts", "ctts"]) {
      const hostile = Buffer.from(file);
      // type, version and flags, entry count, then the first run's sample count.
      const at = hostile.indexOf(table, 0, "latin1") + 4 + 4 + 4;
      hostile.writeUInt32BE(0xffffffff, at);
      expect(await keyframesFromMp4(fromBuffer(hostile), hostile.length, [1])).toBeNull();
    }
  });

  it.each([
    ...exact,
    ["variable frame rate", { fps: 30, gop: 30, durationSeconds: 20, variableFrameRate: true }],
    ["HEVC", { fps: 30, gop: 60, bframes: 2, durationSeconds: 20, codec: "hevc" }],
  ] as [string, TestVideoSpec][])(
    "%s: mode keyframes lists from the index exactly what ffprobe -skip_frame nokey lists",
    async (_, spec) => {
      const video = await makeTestVideo(spec);
      const reader = await openByteReader(video);
      if (!reader) throw new Error("no reader");
      // The index answers (not the ffprobe fallback) …
      expect(await keyframeTicksFromMp4(reader.read, reader.size)).not.toBeNull();
      await reader.close();
      // … and its list is ffprobe's, time for time.
      const probe = (await probeMedia(video)).video;
      if (!probe) throw new Error("no video stream");
      const { stdout } = await run("ffprobe", keyframeListArgs(video, probe.streamIndex));
      const theirs = parseKeyframeList(stdout, probe.timeBase, probe.startTime);
      expect(theirs.length).toBeGreaterThan(5);
      expect(await listKeyframes(video, probe)).toEqual(theirs);
    },
  );

  it("reads over HTTP in exact byte ranges from the loopback only", async () => {
    const video = await makeTestVideo({ fps: 30, gop: 60, bframes: 2, durationSeconds: 20 });
    const server = await startTestServer();
    server.route("/v.mp4", fileRoute(video, { ranges: true }));
    try {
      const reader = await openByteReader(`${server.origin}/v.mp4`);
      if (!reader) throw new Error("no reader");
      const over = await keyframesFromMp4(reader.read, reader.size, TIMES);
      expect(over).toEqual(await fromIndex(video, TIMES));
      expect(await openByteReader("http://example.com/v.mp4")).toBeNull();
    } finally {
      await server.close();
    }
  });
});

describe("one read of the moov per relay input", () => {
  it("serves the probe, the keyframe lookup and the index from one read, answering as each alone", async () => {
    const video = await makeTestVideo({ fps: 30, gop: 60, bframes: 2, durationSeconds: 20 });
    const server = await startTestServer();
    server.route("/v.mp4", fileRoute(video, { ranges: true }));
    try {
      // Each alone, through its own reader: what the shared read must answer, and what one
      // read of the moov costs in requests.
      const url = `${server.origin}/v.mp4`;
      const reader = await openByteReader(url);
      if (!reader) throw new Error("no reader");
      const aloneProbe = await probeFromMp4(reader.read, reader.size);
      const aloneKeyframes = await keyframesFromMp4(reader.read, reader.size, TIMES);
      const before = server.requests.length;
      const aloneIndex = await mp4IndexFrom(reader.read, reader.size);
      const oneRead = server.requests.length - before + 1; // its HEAD
      expect(aloneProbe).not.toBeNull();
      expect(aloneIndex).not.toBeNull();

      // A job starts all three at once (job.ts): the moov is read once, for all of them.
      const shared = `${url}?job=1`;
      const start = server.requests.length;
      const [probe, keyframes, found] = await Promise.all([
        probeMedia(shared),
        probeKeyframesAt(shared, "v:0", TIMES),
        moovOf(shared),
      ]);
      expect(server.requests.length - start).toBe(oneRead);
      expect(probe).toEqual(aloneProbe);
      expect(keyframes).toEqual(aloneKeyframes);
      if (!found) throw new Error("no moov");
      const index = mp4IndexOfMoov(found);
      expect(index?.moovAt).toBe(aloneIndex?.moovAt);
      expect(index?.layout.offsets).toEqual(aloneIndex?.layout.offsets);
      expect(index?.moov.equals(aloneIndex?.moov ?? Buffer.alloc(0))).toBe(true);
      // A later lookup of the same input (listKeyframes) reads nothing more.
      const later = server.requests.length;
      await probeKeyframesAt(shared, "v:0", [1, 2]);
      expect(server.requests.length).toBe(later);
    } finally {
      await server.close();
    }
  });

  it("reads a local file each time (it may be written again between jobs)", async () => {
    const video = await makeTestVideo({ fps: 30, gop: 60, bframes: 0, durationSeconds: 4 });
    const first = await moovOf(video);
    const second = await moovOf(video);
    expect(first?.moov.equals(second?.moov ?? Buffer.alloc(0))).toBe(true);
    expect(first).not.toBe(second);
  });
});
