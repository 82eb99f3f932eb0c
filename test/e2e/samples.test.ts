// The sample the service serves itself, on a stack that refuses private addresses (as `npm
// start` does by default): a job on {origin}/samples/intro.mp4 completes in every mode with
// sensible frames, and every other loopback URL is still refused, tricks included.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleUrl } from "../../schema/samples.ts";
import { call, download, type Harness, startHarness } from "./support/harness.ts";

const SAMPLE_FILE = join(import.meta.dirname, "../../edge/samples/intro.mp4");
/** The colour of each 6-second scene (scripts/make-samples.mjs), as [r, g, b]. */
const SCENE_COLOURS = [
  [0x0b, 0x1d, 0x51],
  [0xf2, 0xc9, 0x4c],
  [0x06, 0x4e, 0x3b],
  [0xe5, 0xe7, 0xeb],
  [0x7f, 0x1d, 0x1d],
];

let h: Harness;
let auth: Record<string, string>;
let sample: string;

beforeAll(async () => {
  h = await startHarness({ STILLS_ALLOW_PRIVATE_NETWORK: "0" });
  auth = (await h.newKey("starter")).auth;
  sample = sampleUrl(h.stack.baseUrl);
  // The same bytes at the same path on another loopback port: refused, so never fetched.
  h.serveVideo("/samples/intro.mp4", SAMPLE_FILE);
  h.serveVideo("/clip.mp4", SAMPLE_FILE);
  h.videos.route("/to-sample", (_req, res) => res.writeHead(302, { location: sample }).end());
});

afterAll(async () => {
  await h?.close();
});

/** The colour at the frame's top-left corner, away from every text. */
async function cornerColour(url: string): Promise<number[]> {
  const file = await download(url);
  expect(file.status).toBe(200);
  expect(file.type).toBe("image/jpeg");
  const { data } = await sharp(file.bytes)
    .extract({ left: 8, top: 8, width: 16, height: 16 })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const sums = [0, 0, 0];
  for (let i = 0; i < data.length; i += 3) for (let c = 0; c < 3; c++) sums[c] += data[i + c];
  return sums.map((sum) => sum / (data.length / 3));
}

function sceneAt(seconds: number): number {
  return Math.min(4, Math.floor(seconds / 6));
}

function expectColour(actual: number[], expected: number[], what: string) {
  for (let c = 0; c < 3; c++) expect(Math.abs(actual[c] - expected[c]), what).toBeLessThan(24);
}

describe("the sample video, with private addresses refused", () => {
  it("is served by the edge with ranges, as video/mp4", async () => {
    const whole = await fetch(sample);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("video/mp4");
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.equals(readFileSync(SAMPLE_FILE))).toBe(true);
    const part = await fetch(sample, { headers: { range: "bytes=0-99" } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(0, 100))).toBe(true);
  });

  it("count: 6 frames of a 30 s 1280×720 video, each showing the scene on screen at its time", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      headers: auth,
      body: { url: sample, count: 6 },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const job = res.body;
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job.duration_seconds).toBeCloseTo(30, 0);
    expect([job.width, job.height]).toEqual([1280, 720]);
    expect(job.frames.map((f: any) => f.timestamp)).toEqual([2.5, 7.5, 12.5, 17.5, 22.5, 27.5]);
    for (const frame of job.frames) {
      expect(frame.status).toBe("ok");
      expectColour(
        await cornerColour(frame.url),
        SCENE_COLOURS[sceneAt(frame.timestamp)],
        `frame at ${frame.timestamp}`,
      );
    }
    expect(job.credits_charged).toBe(1);
  });

  it("scenes: the first shot and one frame per cut, at 6, 12, 18 and 24 s", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      headers: auth,
      body: { url: sample, mode: "scenes" },
    });
    const job = res.body;
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    const times = job.frames.map((f: any) => f.timestamp);
    expect(times).toHaveLength(5);
    expect(times[0]).toBeLessThan(1);
    for (const [i, t] of times.slice(1).entries())
      expect(Math.abs(t - 6 * (i + 1))).toBeLessThan(0.2);
    for (const [i, frame] of job.frames.entries()) {
      expectColour(await cornerColour(frame.url), SCENE_COLOURS[i], `scene ${i + 1}`);
    }
  });

  it("keyframes: one every 2 s; interval: a frame every 5 s", async () => {
    const keyframes = (
      await call(h.stack, "POST", "/jobs?wait=true", {
        headers: auth,
        body: { url: sample, mode: "keyframes" },
      })
    ).body;
    expect(keyframes.status, JSON.stringify(keyframes.error)).toBe("completed");
    expect(keyframes.frames.map((f: any) => Math.round(f.timestamp))).toEqual(
      Array.from({ length: 15 }, (_, i) => 2 * i),
    );
    const interval = (
      await call(h.stack, "POST", "/jobs?wait=true", {
        headers: auth,
        body: { url: sample, every: 5 },
      })
    ).body;
    expect(interval.status, JSON.stringify(interval.error)).toBe("completed");
    expect(interval.frames.map((f: any) => f.timestamp)).toEqual([0, 5, 10, 15, 20, 25]);
  });

  it("refuses every other loopback URL at creation, for jobs and the demo, and fetches none of them", async () => {
    const base = h.stack.baseUrl;
    const port = new URL(base).port;
    const tricks = [
      `${base}/v1/pricing`,
      `${base}/samples/other.mp4`,
      `${base}/samples/intro.mp4?download=1`,
      `${base}/samples/intro.mp4?`,
      `${base}/samples/../v1/pricing`,
      `${base}/samples/%2e%2e/v1/pricing`,
      `${base}/samples/intro.mp4/..`,
      `http://localhost:${port}/samples/intro.mp4`,
      `http://[::1]:${port}/samples/intro.mp4`,
      `http://user@127.0.0.1:${port}/samples/intro.mp4`,
      `${h.videos.origin}/samples/intro.mp4`,
      `${h.videos.origin}/clip.mp4`,
      `${h.videos.origin}/to-sample`,
    ];
    for (const url of tricks) {
      const job = await call(h.stack, "POST", "/jobs", { headers: auth, body: { url, count: 2 } });
      expect(job.status, `${url}: ${JSON.stringify(job.body)}`).toBe(400);
      expect(job.body.data.name, url).toBe("InvalidUrl");
      const demo = await call(h.stack, "POST", "/demo", { body: { url } });
      expect(demo.status, url).toBe(400);
      expect(demo.body.data.name, url).toBe("InvalidUrl");
    }
    expect(h.videos.requests).toEqual([]);
  });
});
