// Pictures nothing refers to, hidden from the decoder as the relay passes them
// (extractor/ffmpeg/unneeded-frames.ts): the index says where each sample lies as ffprobe
// does; every picture that is still decoded is bit for bit what it was; the frames on screen at
// the wanted times are never hidden; and a job that hides them delivers the same bytes as one
// that does not. Expected frame numbers come from the frame rate, checksums from ffmpeg.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { unzipSync } from "fflate";
import { describe, expect, it, vi } from "vitest";
import type { SampleLayout } from "../../extractor/ffmpeg/mp4-index.ts";
import {
  MAX_LAYOUT_SAMPLES,
  sampleLayoutFromIndex,
  sampleLayoutFromMp4,
  withByteReader,
} from "../../extractor/ffmpeg/mp4-index.ts";
import { PictureIndex } from "../../extractor/ffmpeg/unneeded-frames.ts";
import { setLogLevel } from "../../extractor/log.ts";
import { toSlotTimes } from "../../extractor/slots.ts";
import type { SourceHandle } from "../../extractor/source-input.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { makeTestVideo } from "../support/videos.ts";
import {
  cfrFrameAt,
  deliveredNumbers,
  frameBytes,
  misreadingSource,
  runJob,
  watchedHidingSource,
} from "./helpers.ts";

const run = promisify(execFile);

function layoutOrNull(video: string): Promise<SampleLayout | null> {
  return withByteReader(video, undefined, sampleLayoutFromMp4);
}

async function layoutOf(video: string): Promise<SampleLayout> {
  const layout = await layoutOrNull(video);
  if (!layout) throw new Error("no layout");
  return layout;
}

/** What ffmpeg writes with `args` (inputs and options) to a new MP4 in a temp directory. */
async function ffmpegMp4(name: string, args: string[]): Promise<string> {
  const video = join(await mkdtemp(join(tmpdir(), `stills-${name}-`)), "v.mp4");
  await run("ffmpeg", ["-v", "error", ...args, video]);
  return video;
}

/** pts (ticks) → ffmpeg's checksum of every frame the decoder gives. */
/**
 * Every decoded picture's checksum by pts, from one decoder thread: the reference decode. With
 * frame threads, ffmpeg 5.1 drops a few pictures of a file with hidden access units now and
 * then when the machine is loaded (3 of 178 in 6 of 30 runs against a busy CPU, never with one
 * thread, never in the file without hiding); a job's runs catch that as IndexDisagreed
 * (decode.ts) and decode again without hiding.
 */
async function frameChecksums(video: string): Promise<Map<number, string>> {
  const { stderr } = await run(
    "ffmpeg",
    [
      "-hide_banner",
      "-nostats",
      "-copyts",
      "-threads",
      "1",
      "-i",
      video,
      "-vf",
      "showinfo",
      "-f",
      "null",
      "-",
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const sums = new Map<number, string>();
  for (const match of stderr.matchAll(/pts:\s*(-?\d+)\s.*?\schecksum:([0-9A-F]+)/g)) {
    sums.set(Number(match[1]), match[2]);
  }
  return sums;
}

/** `source` encoded again by x264 with up to three B-frames, and `options` (output options). */
function withBFrames(name: string, source: string, options: string[]): Promise<string> {
  return ffmpegMp4(name, ["-i", source, ...options, "-c:v", "libx264", "-bf", "3"]);
}

/** `pictures` again with B-frames, frame `frame` and those after it shown `seconds` later. */
function withHole(pictures: string, frame: number, seconds: number): Promise<string> {
  return withBFrames("hole", pictures, [
    "-vf",
    `setpts='PTS+if(gte(N,${frame}),${seconds}/TB,0)'`,
    "-fps_mode",
    "vfr",
    "-g",
    "60",
  ]);
}

/** A small deterministic generator, so a failure can be replayed. */
function randomSizes(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return 1 + (state % 9000);
  };
}

/** localFileSource, counting the decode runs that asked for a hiding address. */
function countingSource(video: string): { source: SourceHandle; runs: Set<number>[] } {
  const runs: Set<number>[] = [];
  const source = watchedHidingSource(video, (frames) => runs.push(frames.keep));
  return { source, runs };
}

describe("the sample layout of an H.264 MP4", () => {
  for (const flags of ["+faststart", ""]) {
    it(`says where each video sample lies and when it is shown, as ffprobe does (${flags || "moov at the end"})`, async () => {
      const source = await makeTestVideo({
        fps: 30,
        gop: 60,
        bframes: 3,
        durationSeconds: 6,
        audio: true,
      });
      const video = await ffmpegMp4("layout", [
        "-i",
        source,
        "-c",
        "copy",
        ...(flags ? ["-movflags", flags] : []),
      ]);
      const layout = await layoutOf(video);
      const { stdout } = await run("ffprobe", [
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "packet=pos,size,pts_time",
        "-of",
        "csv=p=0",
        video,
      ]);
      const packets = stdout
        .trim()
        .split("\n")
        .map((line) => line.split(",").map(Number));
      expect(layout.offsets.length).toBe(packets.length);
      expect(layout.offsets).toEqual(packets.map(([, , pos]) => pos));
      expect(layout.sizes).toEqual(packets.map(([, size]) => size));
      for (const [i, pts] of layout.pts.entries()) expect(pts).toBeCloseTo(packets[i][0], 6);
      expect(layout.reordered).toBe(true);
    });
  }

  it("is not reordered without B-frames, and then nothing is indexed for hiding", async () => {
    const video = await makeTestVideo({ fps: 30, gop: 60, bframes: 0, durationSeconds: 4 });
    const layout = await layoutOf(video);
    expect(layout.reordered).toBe(false);
    expect(PictureIndex.of(layout)).toBeNull();
  });
});

describe("which H.264 MP4s are indexed for hiding", () => {
  it("not field-coded video: an interlaced stream may hold a frame's fields as two samples", async () => {
    const source = await makeTestVideo({ fps: 30, gop: 60, bframes: 3, durationSeconds: 2 });
    const video = await withBFrames("interlaced", source, [
      "-flags",
      "+ildct+ilme",
      "-x264-params",
      "tff=1",
    ]);
    const layout = await layoutOf(video);
    expect(layout.progressive).toBe(false);
    expect(PictureIndex.of(layout)).toBeNull();
    expect((await layoutOf(source)).progressive).toBe(true);
  });

  it("not an index whose edit starts inside a frame (a copy cut with -ss): its times are not ffmpeg's", async () => {
    const source = await makeTestVideo({ fps: 30, gop: 60, bframes: 3, durationSeconds: 6 });
    const video = await ffmpegMp4("cut", ["-ss", "1.31", "-i", source, "-c", "copy"]);
    expect(await layoutOrNull(video)).toBeNull();
    expect(await layoutOf(source)).not.toBeNull();
  });

  it("not more samples than it is worth indexing, however small the moov that claims them", async () => {
    // A real parameter set, so that only the count can turn the index down.
    const file = await readFile(await makeTestVideo({ bframes: 3 }));
    const at = file.indexOf("avcC");
    const avcC = file.subarray(at + 4, at - 4 + file.readUInt32BE(at - 4));
    const box = (type: string, ...parts: Buffer[]) => {
      const body = Buffer.concat(parts);
      const head = Buffer.alloc(8);
      head.writeUInt32BE(8 + body.length);
      head.write(type, 4, "latin1");
      return Buffer.concat([head, body]);
    };
    const words = (...values: number[]) => {
      const b = Buffer.alloc(4 * values.length);
      for (const [i, v] of values.entries()) b.writeUInt32BE(v >>> 0, 4 * i);
      return b;
    };
    const moovFor = (samples: number) =>
      box(
        "moov",
        box("mvhd", words(0, 0, 0, 1000, 0), Buffer.alloc(80)),
        box(
          "trak",
          box(
            "mdia",
            box("mdhd", words(0, 0, 0, 15360, 0), Buffer.alloc(4)),
            box("hdlr", words(0, 0), Buffer.from("vide"), Buffer.alloc(12)),
            box(
              "minf",
              box(
                "stbl",
                box("stsd", words(0, 1), box("avc1", Buffer.alloc(78), box("avcC", avcC))),
                box("stts", words(0, 1, samples, 512)),
                box("stsz", words(0, 100, samples)),
                box("stsc", words(0, 1, 1, samples, 1)),
                box("stco", words(0, 1, 1000)),
              ),
            ),
          ),
        ),
      );
    expect(sampleLayoutFromIndex(moovFor(MAX_LAYOUT_SAMPLES))?.offsets.length).toBe(
      MAX_LAYOUT_SAMPLES,
    );
    // Turned down from stsz's count (readTrack), before any table is expanded.
    expect(sampleLayoutFromIndex(moovFor(MAX_LAYOUT_SAMPLES + 1))).toBeNull();
  });
});

describe("hiding the pictures a run does not need", () => {
  it("leaves every decoded picture bit for bit as it was, and the wanted ones decoded", async () => {
    const fps = 30;
    const video = await makeTestVideo({
      fps,
      gop: 60,
      bframes: 3,
      durationSeconds: 10,
      audio: true,
    });
    const bytes = await readFile(video);
    const layout = await layoutOf(video);
    const times = [0.5, 1.01, 2.5, 3.3333, 5, 7.77, 9.95];
    const index = PictureIndex.of(layout);
    if (!index) throw new Error("B-frames, so an index");
    const hider = index.forSlots(toSlotTimes(times));
    // Requests as ffmpeg makes them through the relay's parts: each starts where the last
    // ended, often inside a sample, and arrives in chunks of any size.
    const out: Buffer[] = [];
    const next = randomSizes(7);
    let at = 0;
    while (at < bytes.length) {
      const partEnd = Math.min(bytes.length, at + next() * 20);
      const pass = hider.stream(at);
      while (at < partEnd) {
        const end = Math.min(partEnd, at + next());
        out.push(pass(bytes.subarray(at, end)));
        at = end;
      }
    }
    const hidden = join(await mkdtemp(join(tmpdir(), "stills-hidden-")), "v.mp4");
    await writeFile(hidden, Buffer.concat(out));

    const before = await frameChecksums(video);
    const after = await frameChecksums(hidden);
    expect(before.size).toBe(10 * fps);
    // x264's non-reference B-frames are a third or more of this file's frames.
    expect(after.size).toBeLessThan(before.size * 0.75);
    expect(hider.hidden).toBeGreaterThan(before.size * 0.25);
    for (const [pts, sum] of after) expect(sum).toBe(before.get(pts));
    // The frame on screen at each time is among those decoded (timescale 15360 at 30 fps).
    const ticks = (frame: number) => (frame * 15360) / fps;
    for (const t of times) expect(after.has(ticks(cfrFrameAt(t, fps)))).toBe(true);
  });
});

describe("a job whose source hides unneeded pictures", () => {
  const cases: [string, Partial<JobOptions>, "dense" | "sparse"][] = [
    ["dense, every 0.25 s to the last frame", { mode: "interval", every: 0.25 }, "dense"],
    [
      "sparse, exact times in batches",
      { mode: "timestamps", timestamps: [1.05, 3.3, 7.71, 11.05, 14.9, 18.42, 19.98] },
      "sparse",
    ],
  ];
  for (const [name, options, strategy] of cases) {
    it(`delivers the same bytes as one that does not: ${name}`, async () => {
      const fps = 30;
      const video = await makeTestVideo({
        fps,
        gop: 60,
        bframes: 3,
        durationSeconds: 20,
        width: 640,
        height: 360,
      });
      const plain = await runJob(video, options, { strategy });
      const { source, runs } = countingSource(video);
      try {
        const hidden = await runJob(source.input, options, { strategy, source });
        expect(runs.length).toBeGreaterThan(0);
        for (const keep of runs) expect(keep.size).toBeLessThan(20 * fps);
        const numbers = await deliveredNumbers(hidden);
        expect(numbers).toEqual(await deliveredNumbers(plain));
        const times = plain.outcome.frames.map((f) => f.timestamp);
        expect(numbers).toEqual(times.map((t) => cfrFrameAt(t, fps)));
        for (const frame of plain.outcome.frames) {
          expect(await frameBytes(hidden, frame.index)).toEqual(
            await frameBytes(plain, frame.index),
          );
        }
        expect(hidden.outcome.frames.map((f) => f.pts)).toEqual(
          plain.outcome.frames.map((f) => f.pts),
        );
      } finally {
        await source.close();
      }
    });
  }
});

describe("a run that hides pictures", () => {
  it("is not used on a cut whose index disagrees with ffmpeg's clock: the same frames as without", async () => {
    // A 0.5 s hole after frame 39, then a copy cut at 1.5 s, inside the frame shown over the
    // hole: ffmpeg's times start at the next frame, the index's at the cut (0.3 s apart).
    const fps = 30;
    const pictures = await makeTestVideo({ fps, gop: 60, bframes: 3, durationSeconds: 8 });
    const gap = await withHole(pictures, 40, 0.5);
    const video = await ffmpegMp4("cut", ["-ss", "1.5", "-i", gap, "-c", "copy"]);
    const options: Partial<JobOptions> = { mode: "timestamps", timestamps: [1, 2, 4.51, 5.55] };
    const plain = await runJob(video, options, { strategy: "sparse" });
    const { source, runs } = countingSource(video);
    try {
      const hidden = await runJob(source.input, options, { strategy: "sparse", source });
      expect(hidden.outcome.frames.map((f) => [f.status, f.pts])).toEqual(
        plain.outcome.frames.map((f) => [f.status, f.pts]),
      );
      for (const frame of plain.outcome.frames) {
        expect(await frameBytes(hidden, frame.index)).toEqual(await frameBytes(plain, frame.index));
      }
      expect(runs).toEqual([]);
    } finally {
      await source.close();
    }
  });

  it("delivers the exact frames when three frames in four are hidden (no B-frame referred to)", async () => {
    const fps = 30;
    const source = await makeTestVideo({ fps, gop: 60, bframes: 0, durationSeconds: 8 });
    const video = await withBFrames("flat-b", source, [
      "-b_strategy",
      "0",
      "-x264-params",
      "b-pyramid=none:b-adapt=0",
      "-g",
      "60",
    ]);
    const options: Partial<JobOptions> = { mode: "interval", every: 1 };
    const { source: opened, runs } = countingSource(video);
    try {
      const hidden = await runJob(opened.input, options, { strategy: "dense", source: opened });
      expect(hidden.outcome.status).toBe("completed");
      // One run, keeping the eight frames picked (and the one after each) of 240.
      expect(runs.map((keep) => keep.size <= 17)).toEqual([true]);
      expect(await deliveredNumbers(hidden)).toEqual(
        hidden.outcome.frames.map((f) => cfrFrameAt(f.timestamp, fps)),
      );
    } finally {
      await opened.close();
    }
  });

  it("does not take ffmpeg's word for a hidden picture as damage: a frame shown for 2 s is still delivered", async () => {
    // Frame 90 comes 2 s after frame 89, which stays on screen meanwhile. Had the hidden
    // pictures' "no frame!" counted as damage, a time late in that gap would be reported as past
    // what a damaged file could decode (decode.ts deliveredFrame).
    const fps = 30;
    const pictures = await makeTestVideo({ fps, gop: 60, bframes: 3, durationSeconds: 6 });
    const video = await withHole(pictures, 90, 2);
    const options: Partial<JobOptions> = { mode: "timestamps", timestamps: [2.2, 4.5, 7.5] };
    const plain = await runJob(video, options, { strategy: "dense" });
    const { source, runs } = countingSource(video);
    try {
      const hidden = await runJob(source.input, options, { strategy: "dense", source });
      expect(runs.length).toBeGreaterThan(0);
      expect(plain.outcome.frames.map((f) => f.status)).toEqual(["ok", "ok", "ok"]);
      expect(hidden.outcome.frames.map((f) => [f.status, f.pts])).toEqual(
        plain.outcome.frames.map((f) => [f.status, f.pts]),
      );
      expect(await deliveredNumbers(hidden)).toEqual([
        cfrFrameAt(2.2, fps),
        89,
        cfrFrameAt(5.5, fps),
      ]);
    } finally {
      await source.close();
    }
  });

  it("is dropped where ffmpeg shows another frame than its index: the job decodes again, exact", async () => {
    // An index that is wrong about which frames are on screen, simulated: the frames it says
    // are shown are hidden after all. The runs must notice before delivering anything of theirs
    // and the job start again without hiding; its ZIP holds each frame once.
    const fps = 30;
    const video = await makeTestVideo({ fps, gop: 60, bframes: 3, durationSeconds: 20 });
    const { source, misled } = await misreadingSource(video);
    const lines: string[] = [];
    setLogLevel("debug");
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    // Four frames in a row in four GOPs: some of them non-reference B-frames, whatever x264
    // chose. Sparse, the four groups go in two batches (20 s: they end well before the end).
    const timestamps = [
      30, 31, 32, 33, 150, 151, 152, 153, 270, 271, 272, 273, 390, 391, 392, 393,
    ].map((n) => (n + 0.5) / fps);
    const name = (index: number) => `frame-${String(index).padStart(4, "0")}.jpg`;
    const options: Partial<JobOptions> = { mode: "timestamps", timestamps, output: "both" };
    try {
      for (const strategy of ["dense", "sparse"] as const) {
        lines.length = 0;
        const before = misled();
        const job = await runJob(source.input, options, { strategy, source });
        expect(misled()).toBeGreaterThan(before);
        const expected = timestamps.map((t) => cfrFrameAt(t, fps));
        expect(await deliveredNumbers(job)).toEqual(expected);
        expect(lines.some((line) => line.includes("the index disagreed"))).toBe(true);
        const [plan] = lines.filter((line) => line.includes('"decode plan"'));
        expect(JSON.parse(plan).runs).toBe(strategy === "sparse" ? 2 : 1);
        const zip = unzipSync(await readFile(join(job.directory, "frames.zip")));
        expect(Object.keys(zip).sort()).toEqual(timestamps.map((_, i) => name(i + 1)));
        for (const frame of job.outcome.frames) {
          expect(Buffer.from(zip[name(frame.index)])).toEqual(await frameBytes(job, frame.index));
        }
      }
    } finally {
      spy.mockRestore();
      setLogLevel("silent");
      await source.close();
    }
  });
});
