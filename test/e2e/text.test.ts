// Text on screen (issue 38, decision 0262), over HTTP only on the real stack: a local MP4 whose
// 2-second stretches show different sentences (ffmpeg drawtext, Debian's DejaVu Sans) or
// nothing, a text: true job, and what comes back: on each frame exactly the sentence on
// screen at its time, read with confidence, in English; a blank stretch reads "". The credits
// charged follow the pricing rule (1 more per 10 frames read), checked on the balance; a job
// without text has no text field on its frames; a language whose data is not installed
// fails the job, uncharged.
import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  creditsAvailable,
  type Harness,
  startHarness,
  startReceiver,
} from "./support/harness.ts";

const run = promisify(execFile);

const FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
// Each stretch is [start, end) in seconds; null shows a blank picture.
const STRETCHES: { start: number; end: number; sentence: string | null }[] = [
  { start: 0, end: 2, sentence: "The quick brown fox jumps" },
  { start: 2, end: 4, sentence: null },
  { start: 4, end: 6, sentence: "Stills reads the screen" },
  { start: 6, end: 8, sentence: "Seven bright lanterns glow" },
];
// Twelve frames, three per stretch, away from the edges.
const TIMES = STRETCHES.flatMap((s) => [s.start + 0.5, s.start + 1, s.start + 1.5]);

function sentenceAt(seconds: number): string {
  const stretch = STRETCHES.find((s) => s.start <= seconds && seconds < s.end);
  return stretch?.sentence ?? "";
}

let h: Harness;
let account: Awaited<ReturnType<Harness["newKey"]>>;
let videoUrl: string;

beforeAll(async () => {
  h = await startHarness();
  account = await h.newKey("starter");
  const dir = await mkdtemp(join(tmpdir(), "stills-e2e-text-"));
  const drawn = STRETCHES.filter((s) => s.sentence !== null)
    .map(
      (s) =>
        `drawtext=fontfile=${FONT}:text='${s.sentence}':fontsize=40:fontcolor=black:` +
        `x=(w-text_w)/2:y=(h-text_h)/2:enable='between(t,${s.start},${s.end - 0.001})'`,
    )
    .join(",");
  const video = join(dir, "sentences.mp4");
  await run("ffmpeg", [
    ...["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=white:size=854x480:rate=10:duration=8"],
    ...["-vf", drawn, "-c:v", "libx264", "-pix_fmt", "yuv420p", video],
  ]);
  videoUrl = h.serveVideo("/media/sentences.mp4", video);
});

afterAll(async () => {
  await h?.close();
});

describe("text: true on a video of drawn sentences", () => {
  it("reads on each frame the sentence on screen at its time, and charges 1 more credit per 10 frames", async () => {
    const before = await creditsAvailable(h.stack, account.auth);
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, timestamps: TIMES, text: true },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const job = res.body;
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job.options).toMatchObject({ text: true });
    expect(job.frames).toHaveLength(TIMES.length);
    for (const frame of job.frames) {
      expect(frame.status).toBe("ok");
      const expected = sentenceAt(frame.timestamp);
      expect({ at: frame.timestamp, content: frame.text.content }).toEqual({
        at: frame.timestamp,
        content: expected,
      });
      expect(frame.text.language).toBe("en");
      if (expected === "") expect(frame.text.confidence).toBe(0);
      else expect(frame.text.confidence).toBeGreaterThan(0.8);
    }
    // Timestamps: 1 credit per 10 frames (12 → 2); text: 1 more per 10 frames read (12 → 2).
    expect(job.credits_charged).toBe(4);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 4);

    // GET serves the same text.
    const read = await call(h.stack, "GET", `/jobs/${job.id}`, { headers: account.auth });
    expect(read.body.frames.map((f: any) => f.text)).toEqual(job.frames.map((f: any) => f.text));
  });

  it("leaves frames without a text field when the job did not ask, and charges as before", async () => {
    const before = await creditsAvailable(h.stack, account.auth);
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, timestamps: TIMES },
      headers: account.auth,
    });
    expect(res.body.status, JSON.stringify(res.body.error)).toBe("completed");
    for (const frame of res.body.frames) expect(frame).not.toHaveProperty("text");
    expect(res.body.credits_charged).toBe(2);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 2);
  });

  it("fails a job whose language has no installed data, clearly and uncharged", async () => {
    const before = await creditsAvailable(h.stack, account.auth);
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, timestamps: [0.5], text: true, text_languages: ["th"] },
      headers: account.auth,
    });
    expect(res.body.status).toBe("failed");
    expect(res.body.error.message).toMatch(
      /^text recognition failed: .*no installed data for the language tha \(Debian: tesseract-ocr-tha\)/,
    );
    expect(res.body.credits_charged).toBe(0);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before);
  });
});

describe("text: true through MCP", () => {
  it("quotes each frame's text in the tool result text an agent reads", async () => {
    const client = new Client({ name: "stills-e2e-text", version: "1.0.0" });
    const url = new URL(`${h.stack.baseUrl}/mcp`);
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: account.auth } }),
    );
    try {
      const times = [1, 3, 5, 7];
      const result: any = await client.callTool(
        { name: "extract_frames", arguments: { url: videoUrl, timestamps: times, text: true } },
        undefined,
        { timeout: 120_000 },
      );
      expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
      const said = result.content
        .filter((b: any) => b.type === "text")
        .map((b: any) => b.text)
        .join("\n");
      for (const [i, at] of times.entries()) {
        const sentence = sentenceAt(at);
        expect(said).toContain(
          sentence === ""
            ? `frame ${i + 1} (${at} s): no text`
            : `frame ${i + 1} (${at} s): ${JSON.stringify(sentence)}`,
        );
      }
      const frames = result.structuredContent.job.frames;
      expect(frames.map((f: any) => f.text.content)).toEqual(times.map(sentenceAt));
    } finally {
      await client.close();
    }
  });
});

describe("text: true in the webhook", () => {
  it("carries each frame's text in the job.completed payload", async () => {
    const receiver = await startReceiver();
    try {
      const times = [1, 3, 5];
      const res = await call(h.stack, "POST", "/jobs?wait=true", {
        body: { url: videoUrl, timestamps: times, text: true, webhook_url: receiver.url },
        headers: account.auth,
      });
      expect(res.body.status, JSON.stringify(res.body.error)).toBe("completed");
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(receiver.received).toHaveLength(1);
      const event = JSON.parse(receiver.received[0].body);
      expect(event.type).toBe("job.completed");
      expect(event.data.frames.map((f: any) => f.text.content)).toEqual(times.map(sentenceAt));
      expect(event.data.frames.map((f: any) => f.text.language)).toEqual(["en", "en", "en"]);
    } finally {
      await receiver.close();
    }
  });
});
