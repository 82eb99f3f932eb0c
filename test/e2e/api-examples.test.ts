// Docs examples that run (issue 34): every named example of POST /jobs in the served OpenAPI
// document is posted as it stands to the real stack and completes, with what its mode
// promises. The examples name the sample the service serves itself
// ({PUBLIC_BASE_URL}/samples/intro.mp4). Where this tree's edge does not serve that sample yet
// (it answers 404), the same file is made here and only the URL's origin is swapped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import { call, download, type Harness, startHarness } from "./support/harness.ts";

const MODES = [
  "count",
  "interval",
  "timestamps",
  "range",
  "scenes",
  "keyframes",
  "storyboard",
  "zip",
];

type Example = { summary: string; value: Record<string, unknown> & { url: string } };

let h: Harness;
let examples: Record<string, Example>;
let auth: Record<string, string>;
let sampleOrigin: string | null = null;

beforeAll(async () => {
  h = await startHarness();
  const document = (await (await fetch(`${h.stack.apiUrl}/openapi.json`)).json()) as {
    paths: Record<string, any>;
  };
  examples = document.paths["/jobs"].post.requestBody.content["application/json"].examples;
  auth = (await h.newKey("starter")).auth;
  const origin = new URL(h.stack.apiUrl).origin;
  const sample = await fetch(`${origin}/samples/intro.mp4`, { method: "HEAD" });
  if (sample.status === 404) {
    const file = await makeTestVideo({
      width: 1280,
      height: 720,
      fps: 30,
      durationSeconds: 30,
      gop: 60,
    });
    sampleOrigin = new URL(h.serveVideo("/samples/intro.mp4", file)).origin;
  } else {
    expect(sample.status).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  await h?.close();
});

/** The example's body as it stands; only the origin changes when the sample is served here. */
function bodyOf(example: Example): Record<string, unknown> {
  if (!sampleOrigin) return example.value;
  const url = new URL(example.value.url);
  return { ...example.value, url: `${sampleOrigin}${url.pathname}` };
}

describe("the create-job examples of the OpenAPI document", () => {
  it("name one example per mode, each on the service's own sample", () => {
    expect(Object.keys(examples)).toEqual(MODES);
    const origin = new URL(h.stack.apiUrl).origin;
    for (const example of Object.values(examples)) {
      expect(example.summary.length).toBeGreaterThan(10);
      expect(example.value.url).toBe(`${origin}/samples/intro.mp4`);
    }
  });

  it.each(MODES)(
    "%s: posted as it stands, it completes with what it promises",
    async (name) => {
      const example = examples[name];
      const res = await call(h.stack, "POST", "/jobs?wait=true", {
        body: bodyOf(example),
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
        case "zip": {
          expect(job.options).toMatchObject({ format: "png", resolution: 480, output: "zip" });
          expect(job.delivered_resolution).toBe(480);
          const zip = await download(job.zip_url);
          expect(zip.status).toBe(200);
          // A ZIP begins with a local file header, PK\x03\x04.
          expect([...zip.bytes.slice(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);
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
