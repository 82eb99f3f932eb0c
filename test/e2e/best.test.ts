// Issue 39 over HTTP on the real stack: mode "best" on the quality clip (blurred, over- and
// under-exposed, flat grey, crisp, low-contrast stretches) returns the crisp stretch first,
// each frame the source's picture at its pts, with its score and parts on the job as read back,
// charged as GET /v1/pricing says; bad combinations are refused naming the field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { meanAbsoluteDifference, referencePictures } from "../extractor/helpers.ts";
import { qualityClip, STRETCH_SECONDS, stretchAt } from "../support/quality-clip.ts";
import { call, creditsAvailable, type Harness, startHarness } from "./support/harness.ts";
import { downloadPixels } from "./support/pixels.ts";

let h: Harness;
let clip: string;
let clipUrl: string;
let account: Awaited<ReturnType<Harness["newKey"]>>;

beforeAll(async () => {
  h = await startHarness();
  clip = await qualityClip();
  clipUrl = h.serveVideo("/media/quality-stretches.mp4", clip);
  account = await h.newKey("starter");
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** Each frame is the source's own picture at its pts (the references in one decode). */
async function expectSourcePictures(frames: { url: string; pts: number; timestamp: number }[]) {
  const size = { width: 640, height: 360 };
  const references = await referencePictures(
    clip,
    frames.map((frame) => frame.pts),
    size,
  );
  for (const [i, frame] of frames.entries()) {
    expect(frame.pts).toBe(frame.timestamp);
    const picture = await downloadPixels(frame.url);
    expect([picture.width, picture.height]).toEqual([640, 360]);
    expect(meanAbsoluteDifference(picture.data, references[i])).toBeLessThan(1.5);
  }
}

describe("mode best over HTTP", { timeout: 120_000 }, () => {
  it("count 1: the crisp stretch's frame, exact, scored; 1 credit as the pricing rules say", async () => {
    const pricing = await call(h.stack, "GET", "/pricing");
    expect(pricing.body.credit_rules.best).toMatch(/1 credit per 10 delivered frames/);
    const before = await creditsAvailable(h.stack, account.auth);
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: clipUrl, mode: "best", format: "png" },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const job = res.body;
    expect(job.status).toBe("completed");
    expect(job.options).toMatchObject({ mode: "best", count: 1 });
    expect(job.frames).toHaveLength(1);
    const [frame] = job.frames;
    expect(stretchAt(frame.timestamp)).toBe("crisp");
    expect(frame.score).toBeGreaterThan(0);
    expect(frame.score).toBeLessThanOrEqual(1);
    expect(Object.keys(frame.score_parts).sort()).toEqual(
      ["colourfulness", "contrast", "exposure", "interest", "sharpness"].sort(),
    );
    await expectSourcePictures([frame]);
    expect(job.credits_charged).toBe(1);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 1);
    // Read back from D1: the same frame, score and parts.
    const read = await call(h.stack, "GET", `/jobs/${job.id}`, { headers: account.auth });
    expect(read.body.frames[0]).toMatchObject({
      timestamp: frame.timestamp,
      score: frame.score,
      score_parts: frame.score_parts,
    });
  });

  it("count 3: three different stretches, best first", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: clipUrl, mode: "best", count: 3, format: "png" },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const frames = res.body.frames;
    expect(frames.map((f: { index: number }) => f.index)).toEqual([1, 2, 3]);
    expect(stretchAt(frames[0].timestamp)).toBe("crisp");
    const stretches = frames.map((f: { timestamp: number }) =>
      Math.floor(f.timestamp / STRETCH_SECONDS),
    );
    expect(new Set(stretches).size).toBe(3);
    const scores = frames.map((f: { score: number }) => f.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    await expectSourcePictures(frames);
  });

  it("refuses timestamps, every and skip with best, naming the field", async () => {
    for (const [extra, param] of [
      [{ timestamps: [1] }, "timestamps"],
      [{ every: 2 }, "every"],
      [{ skip: ["blurry"] }, "skip"],
    ] as const) {
      const res = await call(h.stack, "POST", "/jobs", {
        body: { url: clipUrl, mode: "best", ...extra },
        headers: account.auth,
      });
      expect(res.status).toBe(400);
      expect(res.body.data.name).toBe("InvalidRequest");
      expect(res.body.data.errors.map((e: { param: string }) => e.param)).toContain(param);
    }
  });
});
