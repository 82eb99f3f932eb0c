// Docs examples that run (issue 34): every named example of POST /jobs in the served OpenAPI
// document is posted as it stands to the real stack and completes, with what its mode
// promises. The examples name the sample the service serves itself
// ({PUBLIC_BASE_URL}/samples/intro.mp4, a 30 s 720p clip with scene cuts), and nothing in
// them is changed here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, download, type Harness, startHarness } from "./support/harness.ts";

const MODES = [
  "count",
  "interval",
  "timestamps",
  "range",
  "scenes",
  "keyframes",
  "storyboard",
  "best",
  "slides",
  "animated",
  "zip",
  "budget",
];

type Example = { summary: string; value: Record<string, unknown> & { url: string } };

let h: Harness;
let examples: Record<string, Example>;
let auth: Record<string, string>;

beforeAll(async () => {
  h = await startHarness();
  const document = (await (await fetch(`${h.stack.apiUrl}/openapi.json`)).json()) as {
    paths: Record<string, any>;
  };
  examples = document.paths["/jobs"].post.requestBody.content["application/json"].examples;
  auth = (await h.newKey("starter")).auth;
}, 180_000);

afterAll(async () => {
  await h?.close();
});

describe("the create-job examples of the OpenAPI document", () => {
  it("name one example per mode, each on the service's own sample", () => {
    expect(Object.keys(examples)).toEqual(MODES);
    const origin = new URL(h.stack.apiUrl).origin;
    for (const example of Object.values(examples)) {
      expect(example.summary.length).toBeGreaterThan(10);
      expect(example.value.url).toBe(`${origin}/samples/intro.mp4`);
    }
  });

  it("points at a sample the service serves", async () => {
    const sample = await download(examples.count.value.url);
    expect(sample.status).toBe(200);
    expect(sample.type).toBe("video/mp4");
    expect(sample.bytes.length).toBeGreaterThan(10_000);
  });

  it.each(MODES)(
    "%s: posted as it stands, it completes with what it promises",
    async (name) => {
      const example = examples[name];
      const res = await call(h.stack, "POST", "/jobs?wait=true", {
        body: example.value,
        headers: auth,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const job = res.body;
      expect(job.status, JSON.stringify(job.error)).toBe("completed");
      expect(job.frames_count).toBeGreaterThan(0);
      expect(job.frames_failed).toBe(0);
      expect(job.credits_charged).toBeGreaterThan(0);
      const value = example.value;
      const frames = job.frames as { timestamp: number; status: string; url: string | null }[];
      switch (name) {
        case "count":
          expect(frames).toHaveLength(value.count as number);
          break;
        case "interval":
          expect(frames.map((f) => f.timestamp)).toEqual([0, 5, 10, 15, 20, 25]);
          break;
        case "timestamps":
          expect(frames.map((f) => f.timestamp)).toEqual(value.timestamps);
          break;
        case "range":
          expect(frames.map((f) => f.timestamp)).toEqual([10, 12, 14, 16, 18]);
          break;
        case "scenes":
        case "keyframes":
          expect(job.options.mode).toBe(name);
          expect(frames.length).toBeLessThanOrEqual(value.count as number);
          break;
        case "storyboard":
          expect(job.storyboard?.image_url).toMatch(/^https?:\/\//);
          expect((await download(job.storyboard.image_url)).status).toBe(200);
          break;
        case "best": {
          expect(frames.length).toBeLessThanOrEqual(value.count as number);
          const scores = (job.frames as { score: number }[]).map((f) => f.score);
          expect([...scores].sort((a, b) => b - a)).toEqual(scores);
          break;
        }
        case "slides": {
          // The sample's five scenes, each still but for its knob and clock (pointer-sized).
          expect(frames).toHaveLength(5);
          for (const frame of job.frames) {
            expect(frame.slide.start).toBeLessThan(frame.timestamp);
            expect(frame.slide.end).toBeGreaterThan(frame.timestamp);
            expect(frame.slide.repeat_of).toBeNull();
          }
          break;
        }
        case "animated": {
          expect(job.animated).toMatchObject({ frames: 40, width: 320, format: "webp" });
          const preview = await download(job.animated.url);
          expect(preview.status).toBe(200);
          expect(preview.type).toBe("image/webp");
          break;
        }
        case "zip": {
          expect(job.options).toMatchObject({ format: "png", resolution: 480, output: "zip" });
          expect(job.delivered_resolution).toBe(480);
          const zip = await download(job.zip_url);
          expect(zip.status).toBe(200);
          // A ZIP begins with a local file header, PK\x03\x04.
          expect([...zip.bytes.slice(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);
          break;
        }
        case "budget": {
          // Stills chose the count and the width; the estimate is the delivered frames' own cost.
          const asked = value.budget as { tokens: number; model: string };
          expect(job.budget).toMatchObject({ tokens: asked.tokens, model: asked.model });
          expect(job.budget.frames).toBe(frames.length);
          expect(frames.length).toBeGreaterThan(1);
          expect(job.budget.tokens_estimated).toBe(job.budget.per_frame * frames.length);
          expect(job.budget.tokens_estimated).toBeLessThanOrEqual(asked.tokens);
          expect(job.budget.width).toBeGreaterThan(0);
          break;
        }
      }
      if (name !== "zip") {
        const first = await download(frames[0].url as string);
        expect(first.status).toBe(200);
        expect(first.type).toMatch(/^image\//);
      }
    },
    60_000,
  );
});
