// Frames with their context, over HTTP only on the real stack: a local MP4 with a mov_text
// track (made here from an SRT this test writes), a job with captions: true, and what comes
// back: job.video's duration and size, a WebVTT URL whose cues are the SRT's, and on every
// frame exactly the cue on screen at its pts, computed here from the SRT. A video without
// captions completes with its frames, says so in its notice and costs what it costs without.
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, download, type Harness, startHarness } from "./support/harness.ts";

const run = promisify(execFile);

// Cue edges fall on frame times (10 fps), so frames land exactly on a start and on an end.
const CUES = [
  { start: 0.5, end: 1.5, srt: "<i>Good</i> morning", text: "Good morning" },
  { start: 1.5, end: 3.0, srt: "Fish & chips\nfor two", text: "Fish & chips\nfor two" },
  { start: 4.0, end: 5.2, srt: '<font color="#fff">The end</font>', text: "The end" },
];
const TIMES = [0.2, 0.5, 1.45, 1.5, 2.99, 3.0, 3.5, 4.0, 5.19, 5.25, 5.8];

const srtTime = (s: number) => {
  const ms = Math.round(s * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
};

/** On screen at pts: start ≤ pts < end. */
function onScreen(pts: number): string | null {
  const texts = CUES.filter((c) => c.start <= pts + 1e-9 && pts + 1e-9 < c.end).map((c) => c.text);
  return texts.length > 0 ? texts.join("\n") : null;
}

/** WebVTT read back with this test's own parser. */
function readVtt(text: string) {
  const seconds = (t: string) => t.split(":").reduce((sum, part) => sum * 60 + Number(part), 0);
  return text
    .split(/\n\n+/)
    .slice(1)
    .filter((block) => block.includes("-->"))
    .map((block) => {
      const [timing, ...lines] = block.trim().split("\n");
      const [from, to] = timing.split(" --> ");
      const body = lines
        .join("\n")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
      return { start: seconds(from), end: seconds(to.split(" ")[0]), text: body };
    });
}

let h: Harness;
let account: Awaited<ReturnType<Harness["newKey"]>>;
let withCaptions: string;
let withoutCaptions: string;

beforeAll(async () => {
  h = await startHarness();
  account = await h.newKey("starter");
  const dir = await mkdtemp(join(tmpdir(), "stills-e2e-captions-"));
  const srt = join(dir, "cues.srt");
  await writeFile(
    srt,
    CUES.map((c, i) => `${i + 1}\n${srtTime(c.start)} --> ${srtTime(c.end)}\n${c.srt}\n`).join(
      "\n",
    ),
  );
  const picture = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=6"];
  const h264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p"];
  const subtitled = join(dir, "subtitled.mp4");
  await run("ffmpeg", [
    ...["-v", "error", "-y", ...picture, "-i", srt, "-map", "0:v", "-map", "1:s", ...h264],
    ...["-c:s", "mov_text", "-metadata:s:s:0", "language=eng", subtitled],
  ]);
  const plain = join(dir, "plain.mp4");
  await run("ffmpeg", ["-v", "error", "-y", ...picture, ...h264, plain]);
  withCaptions = h.serveVideo("/media/subtitled.mp4", subtitled);
  withoutCaptions = h.serveVideo("/media/plain.mp4", plain);
});

afterAll(async () => {
  await h?.close();
});

describe("captions: true on a local MP4 with a mov_text track", () => {
  it("returns video, a WebVTT URL and on each frame the exact cue shown at its pts", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: withCaptions, timestamps: TIMES, captions: true },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const job = res.body;
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job.video).toMatchObject({ width: 320, height: 240, rotation: 0, has_audio: false });
    expect(job.video.duration_seconds).toBeCloseTo(6, 1);
    expect(job.video.frame_rate).toBe(10);
    expect(job.captions).toMatchObject({ language: "en", source: "embedded" });

    const file = await download(job.captions.url);
    expect(file.status).toBe(200);
    expect(file.type).toMatch(/^text\/vtt/);
    const vtt = new TextDecoder().decode(file.bytes);
    expect(readVtt(vtt)).toEqual(CUES.map(({ start, end, text }) => ({ start, end, text })));

    expect(job.frames).toHaveLength(TIMES.length);
    for (const frame of job.frames) {
      expect(frame.status).toBe("ok");
      const expected = onScreen(frame.pts);
      // Absent and null both say "no caption"; a present one must be the exact text.
      expect({ pts: frame.pts, caption: frame.caption ?? null }).toEqual({
        pts: frame.pts,
        caption: expected,
      });
    }
    // The frame at 3.0 s is at the second cue's end and the one at 5.25 s is shown from 5.2 s:
    // neither carries a cue that has ended.
    expect(job.frames.find((f: any) => f.timestamp === 3).caption ?? null).toBeNull();
    expect(job.frames.find((f: any) => f.timestamp === 5.25).caption ?? null).toBeNull();
    expect(job.frames.find((f: any) => f.timestamp === 1.5).caption).toBe("Fish & chips\nfor two");
  });
});

describe("captions: true on a video without captions", () => {
  it("completes with its frames, says so, and costs what the same job without captions costs", async () => {
    const body = { url: withoutCaptions, every: 2 };
    const asked = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { ...body, captions: true },
      headers: account.auth,
    });
    const plain = await call(h.stack, "POST", "/jobs?wait=true", { body, headers: account.auth });
    expect(asked.body.status, JSON.stringify(asked.body.error)).toBe("completed");
    expect(plain.body.status).toBe("completed");
    expect(asked.body.frames.map((f: any) => f.status)).toEqual(["ok", "ok", "ok"]);
    expect(asked.body.captions ?? null).toBeNull();
    expect(asked.body.notice).toContain(
      "This video has no captions, so none were returned; captions were not charged.",
    );
    expect(plain.body.notice).not.toContain("captions");
    expect(asked.body.credits_charged).toBeGreaterThan(0);
    expect(asked.body.credits_charged).toBe(plain.body.credits_charged);
    expect(asked.body.video).toMatchObject({ width: 320, height: 240 });
  });
});
