// Captions from a file's own subtitle track, end to end through extractFrames: an MP4 with a
// mov_text track and MKVs with SRT tracks, made here with ffmpeg from cues this test defines.
// The expected caption of every frame is computed here from those cues at the frame's pts, not
// by the code under test; the WebVTT file is read back with this file's own small parser.
process.env.EXTRACTOR_LOG ??= "silent";

import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { unzipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import type { CaptionsContext } from "../../extractor/context/captions.ts";
import { attachCaptions } from "../../extractor/context/captions.ts";
import type { ExtractionOutcome } from "../../extractor/job.ts";
import { extractFrames } from "../../extractor/job.ts";
import { DirectorySink } from "../../extractor/output/directory-sink.ts";
import { platformInfo } from "../../extractor/sources/ytdlp.ts";
import type { FrameResult, JobOptions } from "../../schema/messages.ts";

const run = promisify(execFile);

interface TestCue {
  start: number;
  end: number;
  /** As written into the SRT, markup included. */
  raw: string;
  /** What a caption must say: the text without markup. */
  plain: string;
}

// Sequential cues (mov_text cannot overlap): a gap, cues that touch at 1.5 s, markup, an entity.
const SEQUENTIAL: TestCue[] = [
  { start: 0.5, end: 1.5, raw: "<i>Hello</i> world", plain: "Hello world" },
  { start: 1.5, end: 3.0, raw: "Fish & chips\nsecond line", plain: "Fish & chips\nsecond line" },
  {
    start: 4.0,
    end: 5.25,
    raw: '<font color="#ff0000">Red</font> <b>alert</b>',
    plain: "Red alert",
  },
];
// Matroska keeps overlapping cues: both texts are on screen at once.
const OVERLAPPING: TestCue[] = [
  ...SEQUENTIAL,
  { start: 4.5, end: 5.5, raw: "{\\an8}Sign on top", plain: "Sign on top" },
];

// Frame times chosen to land on cue edges: at 10 fps a frame's pts is a multiple of 0.1 s.
const TIMES = [0.2, 0.5, 1.0, 1.49, 1.5, 2.95, 3.0, 3.5, 4.0, 4.6, 5.25, 5.49, 5.5, 5.9];

function srtTime(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

function srt(cues: TestCue[]): string {
  return cues
    .map((c, i) => `${i + 1}\n${srtTime(c.start)} --> ${srtTime(c.end)}\n${c.raw}\n`)
    .join("\n");
}

/** What is on screen at `pts`: cues with start ≤ pts < end, in start order. */
function expectedCaption(cues: TestCue[], pts: number): string | null {
  const texts = cues.filter((c) => c.start <= pts + 1e-9 && pts + 1e-9 < c.end).map((c) => c.plain);
  return texts.length > 0 ? texts.join("\n") : null;
}

/** A minimal WebVTT reader, independent of extractor/context/cues.ts. */
function readVtt(text: string): { start: number; end: number; text: string }[] {
  expect(text.startsWith("WEBVTT")).toBe(true);
  const time = (t: string) => t.split(":").reduce((total, part) => total * 60 + Number(part), 0);
  return text
    .split(/\n\n+/)
    .slice(1)
    .filter(Boolean)
    .map((block) => {
      const [timing, ...lines] = block.trim().split("\n");
      const [from, to] = timing.split(" --> ");
      const body = lines
        .join("\n")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
      return { start: time(from), end: time(to), text: body };
    });
}

let directory: string;

async function ffmpeg(args: string[]): Promise<void> {
  await run("ffmpeg", ["-v", "error", "-y", ...args]);
}

async function writeSubtitles(name: string, text: string | Buffer): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, text);
  return path;
}

const picture = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=6"];

async function mp4WithMovText(cues: TestCue[], language = "eng"): Promise<string> {
  const subtitles = await writeSubtitles("mp4.srt", srt(cues));
  const out = join(directory, "movtext.mp4");
  await ffmpeg([
    ...picture,
    "-i",
    subtitles,
    "-map",
    "0:v",
    "-map",
    "1:s",
    "-c:v",
    "libx264",
    "-pix_fmt",
    "yuv420p",
    "-c:s",
    "mov_text",
    "-metadata:s:s:0",
    `language=${language}`,
    out,
  ]);
  return out;
}

async function mkvWithSrt(
  name: string,
  tracks: { text: string | Buffer; language: string; isDefault?: boolean }[],
  extra: string[] = [],
  subtitleCodec = "srt",
): Promise<string> {
  const inputs: string[] = [];
  const maps: string[] = ["-map", "0:v"];
  const metadata: string[] = [];
  for (const [i, track] of tracks.entries()) {
    inputs.push("-i", await writeSubtitles(`${name}-${i}.srt`, track.text));
    maps.push("-map", `${i + 1}:s`);
    metadata.push(`-metadata:s:s:${i}`, `language=${track.language}`);
    metadata.push(`-disposition:s:${i}`, track.isDefault ? "default" : "0");
  }
  const out = join(directory, `${name}.mkv`);
  await ffmpeg([
    ...picture,
    ...inputs,
    ...maps,
    "-c:v",
    "libx264",
    "-pix_fmt",
    "yuv420p",
    "-c:s",
    subtitleCodec,
    ...metadata,
    ...extra,
    out,
  ]);
  return out;
}

interface CaptionsRun {
  outcome: ExtractionOutcome;
  directory: string;
}

async function captionsJob(input: string, options: Partial<JobOptions> = {}): Promise<CaptionsRun> {
  const out = await mkdtemp(join(tmpdir(), "stills-captions-"));
  const outcome = await extractFrames(
    {
      input,
      options: {
        mode: "timestamps",
        timestamps: TIMES,
        format: "jpg",
        resolution: 240,
        output: "urls",
        captions: true,
        ...options,
      },
      maxVideoSeconds: 3600,
      clipToMax: false,
      maxFrames: 1000,
    },
    new DirectorySink(out),
  );
  return { outcome, directory: out };
}

function expectCaptionsOnScreen(outcome: ExtractionOutcome, cues: TestCue[]): void {
  expect(outcome.status).toBe("completed");
  expect(outcome.frames).toHaveLength(TIMES.length);
  for (const frame of outcome.frames) {
    expect(frame.status).toBe("ok");
    expect(frame.pts).not.toBeNull();
    expect({ pts: frame.pts, caption: frame.caption }).toEqual({
      pts: frame.pts,
      caption: expectedCaption(cues, frame.pts as number),
    });
  }
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "stills-captions-src-"));
});

describe("captions from an MP4's mov_text track", () => {
  it("puts the cue on screen at each frame's pts on the frame, and none that has ended", async () => {
    const video = await mp4WithMovText(SEQUENTIAL);
    const job = await captionsJob(video);
    expectCaptionsOnScreen(job.outcome, SEQUENTIAL);
    // The frame at exactly 3.0 s is after the second cue's end: it carries nothing.
    const atEnd = job.outcome.frames.find((f) => f.pts === 3);
    expect(atEnd?.caption).toBeNull();
    const atTouch = job.outcome.frames.find((f) => f.pts === 1.5);
    expect(atTouch?.caption).toBe("Fish & chips\nsecond line");
    expect(job.outcome.captions).toEqual({
      key: "captions.vtt",
      language: "en",
      source: "embedded",
    });
    expect(job.outcome.captions_note ?? null).toBeNull();
    const vtt = readVtt(await readFile(join(job.directory, "captions.vtt"), "utf8"));
    expect(vtt).toEqual(SEQUENTIAL.map((c) => ({ start: c.start, end: c.end, text: c.plain })));
  });
});

describe("captions from a Matroska SRT track", () => {
  it("joins overlapping cues and strips SRT and ASS markup", async () => {
    const video = await mkvWithSrt("overlap", [{ text: srt(OVERLAPPING), language: "ger" }]);
    const job = await captionsJob(video);
    expectCaptionsOnScreen(job.outcome, OVERLAPPING);
    expect(job.outcome.frames.find((f) => f.pts === 4.6)?.caption).toBe("Red alert\nSign on top");
    expect(job.outcome.captions).toMatchObject({ language: "de", source: "embedded" });
  });

  it("reads a WebVTT track in Matroska too", async () => {
    const video = await mkvWithSrt(
      "webvtt",
      [{ text: srt(OVERLAPPING), language: "eng" }],
      [],
      "webvtt",
    );
    const probe = await run("ffprobe", [
      "-v",
      "error",
      "-show_entries",
      "stream=codec_name",
      "-of",
      "csv=p=0",
      video,
    ]);
    expect(probe.stdout.split("\n")).toContain("webvtt");
    const job = await captionsJob(video);
    expectCaptionsOnScreen(job.outcome, OVERLAPPING);
  });

  it("keeps captions on the frames' clock when the file starts at 2 s", async () => {
    const video = await mkvWithSrt(
      "offset",
      [{ text: srt(OVERLAPPING), language: "eng" }],
      ["-output_ts_offset", "2"],
    );
    const probe = await run("ffprobe", [
      "-v",
      "error",
      "-show_entries",
      "stream=start_time",
      "-of",
      "csv=p=0",
      video,
    ]);
    expect(Number(probe.stdout.trim().split("\n")[0])).toBeGreaterThanOrEqual(2);
    const job = await captionsJob(video);
    expectCaptionsOnScreen(job.outcome, OVERLAPPING);
    const vtt = readVtt(await readFile(join(job.directory, "captions.vtt"), "utf8"));
    expect(vtt[0]).toEqual({ start: 0.5, end: 1.5, text: "Hello world" });
  });

  it("takes the requested language's track, else the default one, and adds the file to the ZIP", async () => {
    const english: TestCue[] = [{ start: 0, end: 6, raw: "English line", plain: "English line" }];
    const french: TestCue[] = [
      { start: 0, end: 6, raw: "Ligne française", plain: "Ligne française" },
    ];
    const video = await mkvWithSrt("two-tracks", [
      { text: srt(english), language: "eng" },
      { text: srt(french), language: "fre", isDefault: true },
    ]);
    const asked = await captionsJob(video, { captions_language: "en-GB", output: "both" });
    expectCaptionsOnScreen(asked.outcome, english);
    expect(asked.outcome.captions?.language).toBe("en");
    const zip = unzipSync(await readFile(join(asked.directory, "frames.zip")));
    expect(Buffer.from(zip["captions.vtt"]).toString("utf8")).toBe(
      await readFile(join(asked.directory, "captions.vtt"), "utf8"),
    );
    const unasked = await captionsJob(video);
    expectCaptionsOnScreen(unasked.outcome, french);
    expect(unasked.outcome.captions?.language).toBe("fr");
  });
});

describe("videos without usable captions keep their frames", () => {
  it("no subtitle track: captions null and a note that nothing was charged", async () => {
    const video = join(directory, "plain.mp4");
    await ffmpeg([...picture, "-c:v", "libx264", "-pix_fmt", "yuv420p", video]);
    const job = await captionsJob(video);
    expect(job.outcome.status).toBe("completed");
    expect(job.outcome.frames.every((f) => f.status === "ok" && f.key)).toBe(true);
    expect(job.outcome.captions ?? null).toBeNull();
    expect(job.outcome.captions_note).toBe(
      "This video has no captions, so none were returned; captions were not charged.",
    );
  });

  it("a track that is not UTF-8 fails only the captions", async () => {
    const latin1 = Buffer.concat([
      Buffer.from("1\n00:00:00,000 --> 00:00:05,000\nCaf"),
      Buffer.from([0xe9, 0xff, 0xfe]),
      Buffer.from(" cr\u00e8me\n"),
    ]);
    // Copied, not re-encoded: the packets keep the bytes that are not UTF-8.
    const video = await mkvWithSrt("latin1", [{ text: latin1, language: "fre" }], [], "copy");
    const job = await captionsJob(video);
    expect(job.outcome.status).toBe("completed");
    expect(job.outcome.frames.every((f) => f.status === "ok" && f.key)).toBe(true);
    expect(job.outcome.captions ?? null).toBeNull();
    expect(job.outcome.captions_note).toMatch(
      /captions could not be read \(the subrip subtitle track could not be read\)/,
    );
    expect(job.outcome.frames.every((f) => (f.caption ?? null) === null)).toBe(true);
  });

  it("a track of 30,000 cues fails only the captions", async () => {
    const many = Array.from({ length: 30_000 }, (_, i) => ({
      start: i / 10_000,
      end: (i + 1) / 10_000,
      raw: `cue ${i}`,
      plain: "",
    }));
    const video = await mkvWithSrt("many", [{ text: srt(many), language: "eng" }]);
    const job = await captionsJob(video);
    expect(job.outcome.status).toBe("completed");
    expect(job.outcome.frames.filter((f) => f.status === "ok")).toHaveLength(TIMES.length);
    expect(job.outcome.captions ?? null).toBeNull();
    expect(job.outcome.captions_note).toMatch(/over 20000 cues/);
  });
});

describe("captions never spend the job's deadline", () => {
  /** A platform whose caption host never answers: the fetch ends only when its signal does. */
  function stalledContext(job: AbortController, stored: string[]): CaptionsContext {
    return {
      input: "unused.mp4",
      probe: { formatName: "mp4", video: null, hasAudio: false, subtitles: [] },
      source: {
        input: "unused.mp4",
        close: async () => {},
        bytesRead: () => 0,
        info: platformInfo({
          subtitles: { en: [{ ext: "vtt", url: "https://subs.example/en.vtt" }] },
        }),
        fetchSmallFile: (_url, _max, signal) =>
          new Promise((_resolve, reject) => {
            signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
          }),
      },
      options: {
        mode: "every" as never,
        format: "jpg",
        resolution: 240,
        output: "urls",
        captions: true,
      },
      signal: job.signal,
      store: async (name) => {
        stored.push(name);
        return name;
      },
      timeoutMs: 1000,
    };
  }
  const frame = (): FrameResult => ({
    index: 1,
    timestamp: 1,
    status: "ok",
    key: "frame-0001.jpg",
    pts: 1,
    error: null,
  });

  it("a caption host that never answers fails only the captions, after their own time", async () => {
    const stored: string[] = [];
    const frames = [frame()];
    const outcome = await attachCaptions(stalledContext(new AbortController(), stored), frames);
    expect(outcome).toEqual({
      captions: null,
      note: "This video's captions could not be read (reading them took longer than 1 s), so none were returned; the frames are complete and captions were not charged.",
    });
    expect(stored).toEqual([]);
    expect(frames[0].caption).toBeUndefined();
  });

  it("the job's own end still ends the job", async () => {
    const job = new AbortController();
    const pending = attachCaptions(stalledContext(job, []), [frame()]);
    job.abort(new Error("deadline"));
    await expect(pending).rejects.toThrow("deadline");
  });
});
