// The pure parts, checked as data: ffmpeg arguments, slot maths, decode grouping, sizing, and
// the reading of ffprobe's output.
import { execFile } from "node:child_process";
import { availableParallelism } from "node:os";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { decodeThreads, expectedReadBytes } from "../../extractor/decode.ts";
import {
  ALLOWED_DEMUXERS,
  batchDecodeArgs,
  decodeArgs,
  keyframeProbeArgs,
  pictureFilters,
  safeInputArgs,
} from "../../extractor/ffmpeg/args.ts";
import { parseKeyframeRows, parseProbe } from "../../extractor/ffmpeg/probe.ts";
import { planOutputSize } from "../../extractor/sizing.ts";
import {
  ascendingSlotsBefore,
  slotsBefore,
  slotsBeforeExpression,
  toSlotTimes,
} from "../../extractor/slots.ts";
import {
  decodeCostModel,
  keyframesWorthAsking,
  minimumSkipSeconds,
  planDecodeGroups,
} from "../../extractor/strategy.ts";
import { makeTestVideo } from "../support/videos.ts";

const run = promisify(execFile);

describe("input safety flags", () => {
  it("a local file: file protocol only, named with file: so no other protocol can be chosen", () => {
    expect(safeInputArgs("/tmp/concat:x|y.mp4")).toEqual([
      "-protocol_whitelist",
      "file,pipe",
      "-format_whitelist",
      ALLOWED_DEMUXERS,
      "-i",
      "file:/tmp/concat:x|y.mp4",
    ]);
  });

  it("the loopback relay: http and tcp only", () => {
    const args = safeInputArgs("http://127.0.0.1:9000/abc");
    expect(args.slice(0, 2)).toEqual(["-protocol_whitelist", "http,tcp"]);
    expect(args.at(-1)).toBe("http://127.0.0.1:9000/abc");
  });

  it("refuses any other network address", () => {
    expect(() => safeInputArgs("http://example.com/v.mp4")).toThrow(/loopback/);
    expect(() => safeInputArgs("https://127.0.0.1/v.mp4")).toThrow();
  });

  it("allows no playlist or concat demuxer", () => {
    const demuxers = ALLOWED_DEMUXERS.split(",");
    for (const risky of ["hls", "concat", "image2", "avi", "dash"])
      expect(demuxers).not.toContain(risky);
  });
});

describe("decode arguments", () => {
  const base = {
    input: "/v.mp4",
    streamIndex: 0,
    slots: toSlotTimes([1, 2, 3]),
    timeBase: { num: 1, den: 15360 },
    picture: { hdr: null, rotation: 0, width: 640, height: 360, fallbackMatrix: null },
  } as const;

  it("a batch over the relay names each input's expected read in its own URL", () => {
    const parts = [
      { seekSeconds: 10, readSeconds: 1.5, readBytes: 500_000, slots: toSlotTimes([11]) },
      { seekSeconds: 40, readSeconds: 0.5, readBytes: null, slots: toSlotTimes([40.2]) },
    ];
    const inputsOf = (args: string[]) => args.filter((_, i) => args[i - 1] === "-i");
    const relay = "http://127.0.0.1:4000/token";
    const [first, second] = inputsOf(batchDecodeArgs({ ...base, input: relay, parts }));
    expect(new URL(first).pathname).toBe("/token");
    expect(new URL(first).searchParams.get("reads")).toBe("500000");
    expect(second).toBe(relay);
    const local = inputsOf(batchDecodeArgs({ ...base, parts }));
    expect(local).toEqual(["file:/v.mp4", "file:/v.mp4"]);
  });

  it("a run that hides pictures reads each input at its own address and counts no errors for them", () => {
    const rate = (args: string[]) => args[args.indexOf("-max_error_rate") + 1];
    const hiding = "http://127.0.0.1:4000/token?hide=2";
    const single = decodeArgs({ ...base, input: hiding, hidesFrames: true, seekSeconds: null });
    expect(rate(single)).toBe("1");
    expect(single[single.indexOf("-i") + 1]).toBe(hiding);
    expect(decodeArgs({ ...base, seekSeconds: null })).not.toContain("-max_error_rate");
    const parts = [
      { seekSeconds: 10, readSeconds: 1, slots: toSlotTimes([11]), input: hiding },
      { seekSeconds: 40, readSeconds: 1, slots: toSlotTimes([40.2]) },
    ];
    const batch = batchDecodeArgs({ ...base, input: "http://127.0.0.1:4000/token", parts });
    expect(rate(batch)).toBe("1");
    const inputs = batch.filter((_, i) => batch[i - 1] === "-i");
    expect(new URL(inputs[0]).searchParams.get("hide")).toBe("2");
    expect(new URL(inputs[1]).searchParams.get("hide")).toBeNull();
  });

  it("keeps source timestamps, rotates late, stops after the last wanted frame", () => {
    const args = decodeArgs({ ...base, seekSeconds: null });
    expect(args).toContain("-copyts");
    expect(args).toContain("-noautorotate");
    expect(args).not.toContain("-ss");
    expect(args.slice(args.indexOf("-frames:v"), args.indexOf("-frames:v") + 2)).toEqual([
      "-frames:v",
      "3",
    ]);
    const graph = args[args.indexOf("-vf") + 1];
    expect(graph).toMatch(
      /^showinfo=checksum=0,setpts='[^']+',fps=fps=15360\/1:start_time=0:round=up,/,
    );
    expect(args.slice(-5)).toEqual(["-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"]);
  });

  it("copies pictures out on one thread, single run and batch alike (an output option)", () => {
    const tail = ["-threads", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"];
    const single = decodeArgs({ ...base, seekSeconds: null, threads: 6 });
    expect(single.slice(-7)).toEqual(tail);
    expect(single.lastIndexOf("-threads")).toBeGreaterThan(single.lastIndexOf("-i"));
    const parts = [{ seekSeconds: 10, readSeconds: 1, slots: toSlotTimes([11]) }];
    const batch = batchDecodeArgs({ ...base, parts });
    expect(batch.slice(-7)).toEqual(tail);
  });

  it("seeks to the keyframe before a point without dropping frames (we pick them)", () => {
    const args = decodeArgs({ ...base, seekSeconds: 61.5 });
    const at = args.indexOf("-ss");
    expect(args.slice(at, at + 5)).toEqual([
      "-ss",
      "61.500000",
      "-seek_timestamp",
      "1",
      "-noaccurate_seek",
    ]);
    expect(at).toBeLessThan(args.indexOf("-i"));
  });

  it("rotation, HDR and size filters come after picking", () => {
    expect(pictureFilters({ ...base.picture, rotation: 90 })[0]).toBe("transpose=clock");
    expect(pictureFilters({ ...base.picture, rotation: 270 })[0]).toBe("transpose=cclock");
    expect(pictureFilters({ ...base.picture, rotation: 180 }).slice(0, 2)).toEqual([
      "hflip",
      "vflip",
    ]);
    const hdr = pictureFilters({ ...base.picture, hdr: { transfer: "pq", peakNits: 1000 } });
    expect(hdr.join()).toMatch(
      /zscale=t=linear:npl=203.*tonemap=tonemap=mobius:desat=0:peak=4\.9261/,
    );
    expect(hdr.at(-1)).toBe("format=rgb24");
  });
});

describe("slots", () => {
  it("evenly spaced times become a grid; others a list", () => {
    expect(toSlotTimes([0.5, 1, 1.5, 2])).toEqual({
      kind: "grid",
      first: 0.5,
      step: 0.5,
      count: 4,
    });
    expect(toSlotTimes([0.166667, 0.5, 0.833333])).toMatchObject({ kind: "grid", count: 3 });
    expect(toSlotTimes([1, 2, 4])).toEqual({ kind: "list", times: [1, 2, 4] });
  });

  it("counts wanted times strictly before a frame, a frame exactly at t belonging to t", () => {
    for (const slots of [toSlotTimes([1, 2, 3]), toSlotTimes([1, 2, 4])]) {
      expect(slotsBefore(slots, 0)).toBe(0);
      expect(slotsBefore(slots, 1)).toBe(0);
      expect(slotsBefore(slots, 1.0000011)).toBe(1);
      expect(slotsBefore(slots, 2.5)).toBe(2);
      expect(slotsBefore(slots, 99)).toBe(3);
    }
  });

  it("counts the same for frames asked in ascending order as one at a time", () => {
    const frames = Array.from({ length: 400 }, (_, n) => n / 30);
    const times = [0.1, 1 / 3, 1 / 3 + 1e-6, 2.5, 2.5000011, 7, 13.3];
    for (const slots of [toSlotTimes(times), toSlotTimes([0.5, 1, 1.5, 2])]) {
      const ascending = ascendingSlotsBefore(slots);
      expect(frames.map((p) => ascending(p))).toEqual(frames.map((p) => slotsBefore(slots, p)));
    }
  });

  it("ffmpeg's evaluation of the expression agrees with ours", async () => {
    const slots = toSlotTimes([0.1, 0.25, 0.7]);
    const grid = toSlotTimes([0.1, 0.3, 0.5, 0.7]);
    // One 10 fps frame per 0.1 s: each frame's new pts (its slot count) is printed by showinfo.
    for (const s of [slots, grid]) {
      const { stderr } = await run("ffmpeg", [
        "-hide_banner",
        "-f",
        "lavfi",
        "-i",
        "color=s=16x16:r=10:d=1",
        "-vf",
        `setpts='${slotsBeforeExpression(s)}/TB',settb=1,showinfo=checksum=0`,
        "-f",
        "null",
        "-",
      ]);
      const counts = [...stderr.matchAll(/pts:\s*(\d+)\s/g)].map((m) => Number(m[1]));
      expect(counts).toEqual(Array.from({ length: 10 }, (_, n) => slotsBefore(s, n / 10)));
    }
  });
});

describe("decode grouping", () => {
  it("dense times stay one continuous decode", () => {
    const times = Array.from({ length: 240 }, (_, i) => i * 0.5);
    expect(planDecodeGroups(times, () => 0, 1)).toEqual([{ seekSeconds: null, times }]);
  });

  it("sparse times split at keyframes far enough past the previous time", () => {
    const times = [5, 15, 15.5, 30];
    const keyframes = [4, 14, 14, 30];
    expect(planDecodeGroups(times, (i) => keyframes[i], 1)).toEqual([
      { seekSeconds: 5, times: [5] },
      { seekSeconds: 15, times: [15, 15.5] },
      { seekSeconds: 30, times: [30] },
    ]);
  });

  it("never splits where the keyframe is unknown or before the previous time (no span twice)", () => {
    expect(planDecodeGroups([5, 15], () => null, 1)).toHaveLength(1);
    expect(planDecodeGroups([5, 15], () => 4.5, 1)).toHaveLength(1);
  });

  it("asks for keyframes only where seeking could save more than asking costs", () => {
    const hd = decodeCostModel({ width: 1280, height: 720, frameRate: 30 });
    const skip = minimumSkipSeconds(hd);
    // Six frames 2 s apart: each gap barely passes the minimum skip.
    const short = [1, 3, 5, 7, 9, 11];
    expect(keyframesWorthAsking(short, [1, 2, 3, 4, 5], skip, hd)).toBe(false);
    // Twelve frames 10 s apart: each seek could skip seconds of decoding.
    const sparse = Array.from({ length: 12 }, (_, i) => 3 + 10 * i);
    const later = sparse.map((_, i) => i).slice(1);
    expect(keyframesWorthAsking(sparse, later, skip, hd)).toBe(true);
  });

  it("the cost model makes seeking worth it sooner at 1080p than at 360p", () => {
    const fullHd = minimumSkipSeconds(
      decodeCostModel({ width: 1920, height: 1080, frameRate: 30 }),
    );
    const small = minimumSkipSeconds(decodeCostModel({ width: 640, height: 360, frameRate: 30 }));
    expect(fullHd).toBeLessThan(2);
    expect(small).toBeGreaterThan(fullHd * 5);
  });
});

describe("decoder threads", () => {
  const uhd = { width: 3840, height: 2160 };
  const hd = { width: 1920, height: 1080 };
  const cores = availableParallelism();

  it("a few seconds after a seek: one thread, whatever follows", () => {
    const group = { seekSeconds: 10, times: [10.5, 12] };
    expect(decodeThreads(group, uhd, false)).toBe(1);
    expect(decodeThreads(group, hd, true)).toBe(1);
  });

  it("a few seconds from the start with more runs after it: one thread, as a seek", () => {
    expect(decodeThreads({ seekSeconds: null, times: [0, 1.5] }, uhd, true)).toBe(1);
    expect(decodeThreads({ seekSeconds: null, times: [0, 1.5] }, hd, true)).toBe(1);
  });

  it("the job's only run, or a long one: threads by picture size", () => {
    expect(decodeThreads({ seekSeconds: null, times: [0, 1.5] }, uhd, false)).toBe(cores);
    expect(decodeThreads({ seekSeconds: null, times: [0, 1.5] }, hd, false)).toBe(cores * 3);
    expect(decodeThreads({ seekSeconds: null, times: [0, 60] }, uhd, true)).toBe(cores);
    expect(decodeThreads({ seekSeconds: 10, times: [10, 60] }, hd, true)).toBe(cores * 3);
  });
});

describe("output size", () => {
  it("resolution is the short side, landscape and portrait", () => {
    expect(planOutputSize({ width: 3840, height: 2160 }, 1080)).toMatchObject({
      width: 1920,
      height: 1080,
      note: null,
    });
    expect(planOutputSize({ width: 1080, height: 1920 }, 720)).toMatchObject({
      width: 720,
      height: 1280,
    });
  });

  it("never upscales; below 240 keeps the source size; notes say so", () => {
    const small = planOutputSize({ width: 1280, height: 720 }, 2160);
    expect(small).toMatchObject({ width: 1280, height: 720, deliveredResolution: 720 });
    expect(small.note).toMatch(/720p/);
    expect(planOutputSize({ width: 1000, height: 562 }, 1080)).toMatchObject({
      width: 854,
      height: 480,
    });
    expect(planOutputSize({ width: 160, height: 90 }, 240)).toMatchObject({
      width: 160,
      height: 90,
      deliveredResolution: 90,
    });
  });

  it("max_width only shrinks", () => {
    expect(planOutputSize({ width: 1920, height: 1080 }, 1080, 640)).toMatchObject({
      width: 640,
      height: 360,
      deliveredResolution: 360,
    });
    expect(planOutputSize({ width: 1920, height: 1080 }, 360, 4000)).toMatchObject({
      width: 640,
      height: 360,
    });
  });
});

describe("reading ffprobe", () => {
  const stream = {
    index: 1,
    codec_type: "video",
    codec_name: "h264",
    pix_fmt: "yuv420p10le",
    width: 1920,
    height: 1080,
    r_frame_rate: "30/1",
    avg_frame_rate: "30/1",
    time_base: "1/15360",
    start_time: "0.000000",
    duration: "12.5",
  };

  it("phone video: display matrix −90 means turn 90° clockwise, shown portrait", () => {
    const probe = parseProbe({
      streams: [
        { ...stream, side_data_list: [{ side_data_type: "Display Matrix", rotation: -90 }] },
      ],
    });
    expect(probe.video).toMatchObject({
      rotation: 90,
      displayWidth: 1080,
      displayHeight: 1920,
      bitDepth: 10,
    });
  });

  it("the file's average bytes per second, from the container's bit rate", () => {
    const withRate = parseProbe({ streams: [stream], format: { bit_rate: "3000000" } });
    expect(withRate.bytesPerSecond).toBe(375_000);
    expect(parseProbe({ streams: [stream], format: { bit_rate: "N/A" } }).bytesPerSecond).toBe(
      null,
    );
    expect(parseProbe({ streams: [stream] }).bytesPerSecond).toBe(null);
  });

  it("keyframe rows: time, stream and the keyframe's size, by name in any order", async () => {
    const text = [
      "stream_index=0|pts_time=12.000000|size=40601|flags=K_",
      "flags=K_|size=N/A|pts_time=24.000000|stream_index=0",
      "stream_index=0|pts_time=36.033333|size=9326|flags=__",
    ].join("\n");
    expect(parseKeyframeRows(text, 3)).toEqual([
      { streamIndex: 0, keyframe: 12, bytes: 40601 },
      { streamIndex: 0, keyframe: 24, bytes: null },
      null,
    ]);
    // A row short: none can be paired with its time.
    expect(parseKeyframeRows(text, 4)).toEqual([null, null, null, null]);
    // What this machine's ffprobe prints for the arguments we give it.
    const video = await makeTestVideo({ fps: 30, gop: 60, durationSeconds: 6 });
    const { stdout } = await run("ffprobe", keyframeProbeArgs(video, "v:0", [1.5, 4.2]));
    const rows = parseKeyframeRows(stdout, 2);
    expect(rows.map((r) => r?.keyframe)).toEqual([0, 4]);
    for (const row of rows) expect(row?.bytes).toBeGreaterThan(0);
  });

  it("an input's expected read: its span at the average rate, its keyframe, ffmpeg's read-ahead", () => {
    expect(expectedReadBytes(1.5, 375_000, 40_000)).toBe(562_500 + 40_000 + 65_536);
    expect(expectedReadBytes(1.5, 375_000, null)).toBe(562_500 + 65_536);
    expect(expectedReadBytes(1.5, null, 40_000)).toBe(null);
  });

  it("cover art is not a video; Matroska's DURATION tag is an end time", () => {
    expect(
      parseProbe({ streams: [{ ...stream, disposition: { attached_pic: 1 } }] }).video,
    ).toBeNull();
    const mkv = parseProbe({
      streams: [
        {
          ...stream,
          duration: undefined,
          start_time: "5.000",
          tags: { DURATION: "00:00:07.500000000" },
        },
      ],
      format: { duration: "7.5", start_time: "5.0" },
    });
    expect(mkv.video?.durationSeconds).toBeCloseTo(2.5, 6);
  });

  it("HDR: PQ with its mastering peak, variable frame rate flagged", () => {
    const probe = parseProbe({
      streams: [
        {
          ...stream,
          color_transfer: "smpte2084",
          avg_frame_rate: "2997/100",
          side_data_list: [
            { side_data_type: "Mastering display metadata", max_luminance: "4000/1" },
          ],
        },
      ],
    });
    expect(probe.video?.hdr).toEqual({ transfer: "pq", peakNits: 4000 });
    expect(probe.video?.variableFrameRate).toBe(false);
    const vfr = parseProbe({
      streams: [{ ...stream, r_frame_rate: "60/1", avg_frame_rate: "24/1" }],
    });
    expect(vfr.video?.variableFrameRate).toBe(true);
  });
});
