// Direct links are fetched once, by the extractor (decision 0260). The edge accepts any direct
// link on its form and address without fetching it; the extractor reads it, and a link that is
// no video fails with InvalidUrl, uncharged, in about the time a job takes to start.
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import { call, creditsAvailable, download, type Harness, startHarness } from "./support/harness.ts";

let h: Harness;
const requests: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  // A signed-storage style link: no extension, application/octet-stream. The edge's old HEAD
  // check refused it (not video/*), though its bytes are a video.
  h.serveVideo(
    "/blob/abc",
    await makeTestVideo({ durationSeconds: 4 }),
    "application/octet-stream",
  );
  h.videos.route("/article", (req, res) => {
    requests.push(`${req.method} /article`);
    res
      .writeHead(200, { "content-type": "text/html" })
      .end("<!doctype html><title>News</title><p>No video here.</p>");
  });
});

afterAll(async () => {
  await h?.close();
});

it("completes a job on a link without extension whose bytes are a video", async () => {
  const account = await h.newKey("starter");
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: `${h.videos.origin}/blob/abc`, count: 2, resolution: 360 },
    headers: account.auth,
  });
  expect(job.status).toBe(201);
  expect(job.body.platform).toBe("direct");
  expect(job.body.status).toBe("completed");
  expect(job.body.frames_count).toBe(2);
  const frame = await download(job.body.frames[0].url);
  expect(frame.status).toBe(200);
  expect([...frame.bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  expect(job.body.credits_charged).toBeGreaterThan(0);
});

it("fails a page without a video with InvalidUrl, uncharged, and never asks it at creation", async () => {
  const account = await h.newKey("starter");
  const before = await creditsAvailable(h.stack, account.auth);
  const started = performance.now();
  const created = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: `${h.videos.origin}/article`, count: 3 },
    headers: account.auth,
  });
  const seconds = (performance.now() - started) / 1000;
  expect(created.status).toBe(201);
  expect(created.body.status).toBe("failed");
  expect(created.body.error.name).toBe("InvalidUrl");
  expect(created.body.error.message).toContain("not a video file (a page without a video)");
  expect(created.body.error.userMessage).toBe("That link isn't a supported public video URL.");
  expect(created.body.credits_charged ?? 0).toBe(0);
  expect(await creditsAvailable(h.stack, account.auth)).toBe(before);
  // One GET by the extractor; no HEAD by the edge, and no second read.
  expect(requests).toEqual(["GET /article"]);
  console.log(`a page without a video failed ${seconds.toFixed(2)} s after POST (wait=true)`);
});
