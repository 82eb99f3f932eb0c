// The whole service over HTTP only: the real stack, a direct .mp4 link on a local server,
// every mode, format and output, the pixels of what comes back, ZIP contents, credits before
// and after, a signed webhook, a tampered URL and wait=true.
import { unzipSync } from "fflate";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import {
  call,
  download,
  type Harness,
  startHarness,
  startReceiver,
  verifyStandardWebhook,
} from "./support/harness.ts";

const FPS = 30;
/** The frame on screen at t in a constant-frame-rate video that starts at 0. */
const frameAt = (t: number) => Math.floor(t * FPS + 1e-6);

let h: Harness;
let videoUrl: string;
let account: Awaited<ReturnType<Harness["newKey"]>>;
const charged: number[] = [];

beforeAll(async () => {
  h = await startHarness();
  const file = await makeTestVideo({
    width: 320,
    height: 180,
    fps: FPS,
    durationSeconds: 10,
    gop: 30,
  });
  videoUrl = h.serveVideo("/media/clip.mp4", file);
  account = await h.newKey("starter");
});

afterAll(async () => {
  await h?.close();
});

async function expectFrames(
  job: any,
  expected: { t: number; status: "ok" | "error" }[],
  format: string,
) {
  expect(job.frames.map((f: any) => [f.timestamp, f.status])).toEqual(
    expected.map((e) => [e.t, e.status]),
  );
  for (const frame of job.frames) {
    if (frame.status !== "ok") {
      expect(frame.url).toBeNull();
      continue;
    }
    const file = await download(frame.url);
    expect(file.status).toBe(200);
    expect(file.type).toBe({ jpg: "image/jpeg", png: "image/png", webp: "image/webp" }[format]);
    expect((await sharp(file.bytes).metadata()).format).toBe(format === "jpg" ? "jpeg" : format);
    expect((await readImagePattern(file.bytes)).number, `frame at ${frame.timestamp}`).toBe(
      frameAt(frame.timestamp),
    );
  }
}

describe("POST /v1/jobs?wait=true", () => {
  it("interval mode returns the frame on screen every 2 s, as JPG", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, every: 2 },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: "completed",
      platform: "direct",
      frames_failed: 0,
      width: 320,
      height: 180,
    });
    expect(res.body.duration_seconds).toBeCloseTo(10, 1);
    await expectFrames(
      res.body,
      [0, 2, 4, 6, 8].map((t) => ({ t, status: "ok" })),
      "jpg",
    );
    charged.push(res.body.credits_charged);
    expect(res.body.credits_charged).toBe(1);
  });

  it("count mode spaces frames at (i + ½)·span/N, as PNG", async () => {
    const res = await call(h.stack, "POST", "/jobs", {
      body: { url: videoUrl, count: 4, format: "png", wait: true },
      headers: account.auth,
    });
    expect(res.body.status).toBe("completed");
    await expectFrames(
      res.body,
      [1.25, 3.75, 6.25, 8.75].map((t) => ({ t, status: "ok" })),
      "png",
    );
    charged.push(res.body.credits_charged);
  });

  it("timestamps mode returns exact moments as WebP and marks one past the end as an error", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, timestamps: [0.5, 9.9, 12], format: "webp" },
      headers: account.auth,
    });
    expect(res.body).toMatchObject({ status: "completed", frames_count: 3, frames_failed: 1 });
    await expectFrames(
      res.body,
      [
        { t: 0.5, status: "ok" },
        { t: 9.9, status: "ok" },
        { t: 12, status: "error" },
      ],
      "webp",
    );
    charged.push(res.body.credits_charged);
  });

  it("a range with zip output returns a ZIP of the frames and no single URLs", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, every: 1, start: 2, end: 6, output: "zip" },
      headers: account.auth,
    });
    expect(res.body.status).toBe("completed");
    expect(res.body.frames.map((f: any) => f.timestamp)).toEqual([2, 3, 4, 5]);
    expect(res.body.frames.every((f: any) => f.status === "ok" && f.url === null)).toBe(true);
    const zip = await download(res.body.zip_url);
    expect(zip.status).toBe(200);
    expect(zip.type).toBe("application/zip");
    expect(zip.bytes.length).toBe(res.body.zip_bytes);
    const entries = unzipSync(zip.bytes);
    const names = Object.keys(entries).sort();
    expect(names).toHaveLength(4);
    for (const [i, name] of names.entries()) {
      expect((await readImagePattern(entries[name])).number).toBe(frameAt(2 + i));
    }
    charged.push(res.body.credits_charged);
  });
});

describe("credits", () => {
  it("GET /v1/usage shows exactly what the spec's rules charged", async () => {
    const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
    // Each job above covered under a minute with under 100 frames (1 credit), or
    // at most 10 timestamps (1 credit).
    expect(charged).toEqual([1, 1, 1, 1]);
    expect(usage.body.credits).toMatchObject({ plan: 1500 - 4, available: 1500 - 4, pack: 0 });
    expect(usage.body.this_period).toMatchObject({ jobs_completed: 4, credits_charged: 4 });
  });
});

describe("signed URLs and wait on read", () => {
  it("GET /v1/jobs/{id}?wait=true returns the finished job; a tampered URL answers 403", async () => {
    const created = await call(h.stack, "POST", "/jobs", {
      body: { url: videoUrl, timestamps: [3] },
      headers: account.auth,
    });
    expect(created.body.status).toMatch(/queued|processing/);
    const started = Date.now();
    const read = await call(h.stack, "GET", `/jobs/${created.body.id}?wait=true`, {
      headers: account.auth,
    });
    expect(read.body.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(50_000);
    const url = new URL(read.body.frames[0].url);
    expect((await download(url.href)).status).toBe(200);
    url.searchParams.set("signature", "0".repeat(64));
    expect((await download(url.href)).status).toBe(403);
  });
});

describe("the demo", () => {
  it("runs through the same pipeline: 6 evenly spaced JPG frames at most 640 px wide, no credits", async () => {
    const wide = h.serveVideo(
      "/media/wide.mp4",
      await makeTestVideo({ width: 1280, height: 720, fps: FPS, durationSeconds: 6 }),
    );
    const before = await call(h.stack, "GET", "/usage", { headers: account.auth });
    const created = await call(h.stack, "POST", "/demo", { body: { url: wide } });
    expect(created.status).toBe(201);
    let demo = created.body;
    const deadline = Date.now() + 60_000;
    while (!["completed", "failed"].includes(demo.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      demo = (await call(h.stack, "GET", `/demo/${created.body.id}`)).body;
    }
    expect(demo).toMatchObject({
      object: "demo_job",
      status: "completed",
      frames_count: 6,
      frames_failed: 0,
    });
    expect(demo.frames.map((f: any) => f.timestamp)).toEqual([0.5, 1.5, 2.5, 3.5, 4.5, 5.5]);
    for (const frame of demo.frames) {
      const file = await download(frame.url);
      const meta = await sharp(file.bytes).metadata();
      expect(meta.format).toBe("jpeg");
      expect(meta.width).toBeLessThanOrEqual(640);
      expect((await readImagePattern(file.bytes)).number).toBe(frameAt(frame.timestamp));
    }
    const after = await call(h.stack, "GET", "/usage", { headers: account.auth });
    expect(after.body.credits).toEqual(before.body.credits);
  });
});

describe("webhooks", () => {
  it("delivers job.completed with a Standard Webhooks signature the receiver can verify", async () => {
    const receiver = await startReceiver();
    try {
      const created = await call(h.stack, "POST", "/jobs", {
        body: { url: videoUrl, timestamps: [1], webhook_url: receiver.url },
        headers: account.auth,
      });
      const deadline = Date.now() + 30_000;
      while (receiver.received.length === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      expect(receiver.received).toHaveLength(1);
      const hook = receiver.received[0];
      expect(verifyStandardWebhook(await h.webhookSecret(account.email), hook)).toBe(true);
      const tampered = { ...hook, body: hook.body.replace('"completed"', '"failed"') };
      expect(verifyStandardWebhook(await h.webhookSecret(account.email), tampered)).toBe(false);
      const payload = JSON.parse(hook.body);
      expect(payload).toMatchObject({
        type: "job.completed",
        data: { id: created.body.id, status: "completed" },
      });
    } finally {
      await receiver.close();
    }
  });
});
