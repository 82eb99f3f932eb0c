// Issue 39's moving preview over HTTP on the real stack: a job's WebP (40 pictures for 4 s at
// 10 fps, looping, each the source's frame at its time), signed and read back, charged one
// credit on top as GET /v1/pricing says; the demo's added, optional preview (a GIF, free); bad
// bounds refused naming the field; a start past the end fails the job, uncharged.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stills } from "../../sdk/src/index.ts";
import { fetchFrom, freshLoopbackAddress } from "../support/from-address.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import { call, creditsAvailable, download, type Harness, startHarness } from "./support/harness.ts";

const FPS = 24;
let h: Harness;
let videoUrl: string;
let account: Awaited<ReturnType<Harness["newKey"]>>;

beforeAll(async () => {
  h = await startHarness();
  const video = await makeTestVideo({
    width: 640,
    height: 360,
    fps: FPS,
    durationSeconds: 12,
    gop: 48,
  });
  videoUrl = h.serveVideo("/media/animated-source.mp4", video);
  account = await h.newKey("starter");
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** Each picture's painted frame number, with the animation's facts. */
async function picturesOf(url: string) {
  const file = await download(url);
  expect(file.status).toBe(200);
  // Served as what it is, so a browser shows it (a GIF was once application/octet-stream).
  expect(file.type).toBe(url.includes("preview.gif") ? "image/gif" : "image/webp");
  const bytes = Buffer.from(file.bytes);
  const meta = await sharp(bytes, { animated: true }).metadata();
  const numbers: (number | null)[] = [];
  for (let page = 0; page < (meta.pages ?? 1); page++) {
    const png = await sharp(bytes, { page }).removeAlpha().png().toBuffer();
    numbers.push((await readImagePattern(png)).number);
  }
  return { meta, numbers, bytes };
}

const onScreen = (t: number) => Math.floor(t * FPS + 1e-9);

/** POST /v1/demo from a network of its own, so the shared stack's 127.0.0.1 keeps its allowance. */
async function createDemoFrom(from: typeof fetch, body: unknown) {
  const response = await from(`${h.stack.apiUrl}/demo`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe("animated previews over HTTP", { timeout: 120_000 }, () => {
  it("a job's 4 s WebP at 10 fps: 40 pictures, looping, exact; 1 credit on top", async () => {
    const pricing = await call(h.stack, "GET", "/pricing");
    expect(pricing.body.credit_rules.animated).toMatch(/^1 credit on top/);
    const before = await creditsAvailable(h.stack, account.auth);
    const start = 2.03;
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: {
        url: videoUrl,
        timestamps: [1, 2, 3],
        animated: { start, duration: 4, fps: 10, width: 320 },
      },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const job = res.body;
    expect(job.status).toBe("completed");
    expect(job.options.animated).toEqual({
      start,
      duration: 4,
      fps: 10,
      width: 320,
      format: "webp",
    });
    expect(job.animated).toMatchObject({
      frames: 40,
      width: 320,
      height: 180,
      format: "webp",
      start,
      duration: 4,
      fps: 10,
    });
    const { meta, numbers, bytes } = await picturesOf(job.animated.url);
    expect(bytes.length).toBe(job.animated.bytes);
    expect(meta).toMatchObject({ format: "webp", pages: 40, loop: 0, width: 320 });
    expect(numbers).toEqual(numbers.map((_, k) => onScreen(start + k / 10)));
    // 3 timestamps: 1 credit; the preview: 1 more.
    expect(job.credits_charged).toBe(2);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 2);
    const read = await call(h.stack, "GET", `/jobs/${job.id}`, { headers: account.auth });
    expect(read.body.animated).toMatchObject({ frames: 40, bytes: job.animated.bytes });
  });

  it("the demo's optional preview: a GIF beside the six frames, free", async () => {
    const from = fetchFrom(freshLoopbackAddress());
    const res = await createDemoFrom(from, {
      url: videoUrl,
      animated: { start: 6.01, duration: 1, fps: 5, format: "gif" },
    });
    expect(res.status).toBe(201);
    expect(res.body.animated).toBeNull();
    let demo = res.body;
    for (let i = 0; i < 100 && !["completed", "failed"].includes(demo.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      demo = (await call(h.stack, "GET", `/demo/${demo.id}`)).body;
    }
    expect(demo.status).toBe("completed");
    expect(demo.frames).toHaveLength(6);
    expect(demo.animated).toMatchObject({ frames: 5, format: "gif", width: 480, height: 270 });
    const { meta, numbers } = await picturesOf(demo.animated.url);
    expect(meta).toMatchObject({ format: "gif", pages: 5, loop: 0 });
    expect(numbers).toEqual(numbers.map((_, k) => onScreen(6.01 + k / 5)));
    // A demo without it has no animated field at all: the spec's shape, unchanged.
    const plain = await createDemoFrom(from, { url: videoUrl });
    expect(plain.status).toBe(201);
    expect("animated" in plain.body).toBe(false);
  });

  it("the SDK's demo.create takes the preview and downloadPreview saves it", async () => {
    const stills = new Stills({
      baseUrl: h.stack.apiUrl,
      fetch: fetchFrom(freshLoopbackAddress()),
    });
    const demo = await stills.demo.create(
      { url: videoUrl, animated: { start: 1.01, duration: 0.5, fps: 4 } },
      { wait: { timeout: 60_000 } },
    );
    expect(demo.status).toBe("completed");
    expect(demo.animated).toMatchObject({ frames: 2, format: "webp", width: 480 });
    const dir = await mkdtemp(join(tmpdir(), "stills-preview-"));
    const saved = await stills.frames.downloadPreview(demo, dir);
    expect(saved?.path).toBe(join(dir, "preview.webp"));
    expect(saved?.bytes).toBe(demo.animated?.bytes);
    const { numbers } = await picturesOf(demo.animated?.url ?? "");
    expect(numbers).toEqual([onScreen(1.01), onScreen(1.26)]);
  });

  it("refuses duration over 10, fps over 15 and width over 640, naming the field", async () => {
    for (const [animated, param] of [
      [{ duration: 10.5 }, "animated.duration"],
      [{ fps: 16 }, "animated.fps"],
      [{ width: 641 }, "animated.width"],
      [{ format: "mp4" }, "animated.format"],
    ] as const) {
      for (const [path, headers] of [
        ["/jobs", account.auth],
        ["/demo", {}],
      ] as const) {
        const res = await call(h.stack, "POST", path, {
          body: { url: videoUrl, animated },
          headers,
        });
        expect(res.status).toBe(400);
        expect(res.body.data.name).toBe("InvalidRequest");
        expect(res.body.data.errors.map((e: { param: string }) => e.param)).toContain(param);
      }
    }
  });

  it("a preview starting past the end fails the job cleanly, uncharged", async () => {
    const before = await creditsAvailable(h.stack, account.auth);
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, count: 2, animated: { start: 30 } },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("failed");
    expect(res.body.error.name).toBe("ExtractionFailed");
    expect(res.body.error.userMessage).toMatch(/preview starts at 30 s/);
    expect(res.body.credits_charged ?? 0).toBe(0);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before);
  });
});
