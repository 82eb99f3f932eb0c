// Batches on the real stack (issue 40, decision 0340): POST /v1/batches makes one ordinary job
// per link (the same credits and webhooks), fed as the account has room under its plan's
// max_active_jobs; GET /v1/batches/{id} counts them; batch.completed is sent once, signed.
// The fairness test counts, in the origin's request log, how many of account A's items start
// between account B's job arriving and B's own start.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stills } from "../../sdk/src/index.ts";
import { fileRoute } from "../sources/support/servers.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import {
  call,
  creditsAvailable,
  download,
  type Harness,
  startHarness,
  startReceiver,
  verifyStandardWebhook,
} from "./support/harness.ts";

const FPS = 25;
const frameAt = (t: number) => Math.floor(t * FPS + 1e-6);
const MOMENTS = [0.5, 1.5];

let h: Harness;
let file: string;

beforeAll(async () => {
  h = await startHarness();
  file = await makeTestVideo({ width: 160, height: 90, fps: FPS, durationSeconds: 3, gop: 25 });
});

afterAll(async () => {
  await h?.close();
});

/** Serves the test video at `path` (each item its own path, so the origin's log tells them apart). */
function serve(path: string): string {
  h.videos.route(path, fileRoute(file, { ranges: true, contentType: "video/mp4" }));
  return `${h.videos.origin}${path}`;
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 90_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Polls the batch until it completes, as a client should: no faster than the key's plan allows
 * (X-RateLimit-Limit a minute), so the key still has its allowance for the test's reads after
 * the wait (a free key polling four times a second ran dry after about 8 s, and the next read
 * got a 429); a 429 all the same is waited out for its Retry-After; any other answer but 200
 * fails.
 */
async function finished(batchId: string, auth: Record<string, string>) {
  return until(`batch ${batchId} to complete`, async () => {
    const read = await call(h.stack, "GET", `/batches/${batchId}`, { headers: auth });
    if (read.status === 429) {
      const wait = Number(read.headers.get("retry-after"));
      expect(wait, "a 429 says when to come back").toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, wait * 1000));
      return undefined;
    }
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    if (read.body.status === "completed") return read.body;
    const perMinute = Number(read.headers.get("x-ratelimit-limit"));
    if (perMinute > 0) await new Promise((r) => setTimeout(r, 60_000 / perMinute));
    return undefined;
  });
}

describe("a batch of direct links", () => {
  it("5 links: 5 jobs, each with its frames, charged as 5 jobs; batch.completed once, signed", async () => {
    const a = await h.newKey("starter");
    const receiver = await startReceiver();
    const before = await creditsAvailable(h.stack, a.auth);
    const urls = Array.from({ length: 5 }, (_, i) => serve(`/five/${i}.mp4`));
    const created = await call(h.stack, "POST", "/batches", {
      body: { urls, timestamps: MOMENTS, webhook_url: receiver.url },
      headers: a.auth,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.object).toBe("batch");
    expect(created.body.counts.total).toBe(5);
    // The starter plan runs 5 jobs at once: every item is a job from the start.
    expect(created.body.items.data.map((item: any) => [item.index, item.url])).toEqual(
      urls.map((url, i) => [i + 1, url]),
    );
    for (const item of created.body.items.data) expect(item.job_id).toMatch(/^[0-9a-f-]{36}$/);

    const done = await finished(created.body.id, a.auth);
    expect(done.counts).toEqual({
      total: 5,
      pending: 0,
      queued: 0,
      processing: 0,
      completed: 5,
      failed: 0,
      expired: 0,
    });
    // Timestamps mode: 2 frames cost 1 credit per job.
    expect(done.credits_charged).toBe(5);
    expect(before - (await creditsAvailable(h.stack, a.auth))).toBe(5);
    expect(new Set(done.items.data.map((item: any) => item.job_id)).size).toBe(5);

    for (const item of done.items.data) {
      expect(item.status).toBe("completed");
      const job = await call(h.stack, "GET", `/jobs/${item.job_id}`, { headers: a.auth });
      expect(job.body.status).toBe("completed");
      expect(job.body.url).toBe(item.url);
      expect(job.body.credits_charged).toBe(1);
      expect(job.body.frames.map((f: any) => [f.timestamp, f.status])).toEqual(
        MOMENTS.map((t) => [t, "ok"]),
      );
      for (const frame of job.body.frames) {
        const picture = await download(frame.url);
        expect((await readImagePattern(picture.bytes)).number).toBe(frameAt(frame.timestamp));
      }
    }

    // Each job's own event, and the batch's once (a moment more for a repeat to show up).
    const batchEvents = () =>
      receiver.received.filter((hook) => JSON.parse(hook.body).type === "batch.completed");
    await until("batch.completed", async () => (batchEvents().length > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 3000));
    expect(batchEvents()).toHaveLength(1);
    const [hook] = batchEvents();
    expect(verifyStandardWebhook(await h.webhookSecret(a.email), hook)).toBe(true);
    expect(hook.headers["webhook-id"]).toBe(`msg_batch_${created.body.id}_completed`);
    const event = JSON.parse(hook.body);
    expect(event.data).toMatchObject({
      id: created.body.id,
      object: "batch",
      status: "completed",
      credits_charged: 5,
    });
    expect(event.data.counts.completed).toBe(5);
    const jobEvents = receiver.received.filter((h) => JSON.parse(h.body).type === "job.completed");
    expect(jobEvents).toHaveLength(5);
    await receiver.close();
  });

  it("one bad link among 5: 4 completed, 1 failed, charged for the 4 only (fed 2 at a time)", async () => {
    const a = await h.newKey("free"); // 2 jobs at once: the other items wait as pending
    const before = await creditsAvailable(h.stack, a.auth);
    const urls = Array.from({ length: 4 }, (_, i) => serve(`/four/${i}.mp4`));
    urls.push(`${h.videos.origin}/four/missing.mp4`); // the origin answers 404
    const created = await call(h.stack, "POST", "/batches", {
      body: { urls, timestamps: MOMENTS },
      headers: a.auth,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.counts.pending).toBe(3);
    expect(created.body.items.data.filter((i: any) => i.job_id !== null)).toHaveLength(2);

    const done = await finished(created.body.id, a.auth);
    expect(done.counts).toMatchObject({ total: 5, pending: 0, completed: 4, failed: 1 });
    const bad = done.items.data[4];
    expect(bad.status).toBe("failed");
    expect(bad.job_id).toMatch(/^[0-9a-f-]{36}$/);
    // The origin's 404 reads as a deleted video: PrivateContent (spec §1), never charged.
    expect(["PrivateContent", "DownloadFailed", "NoVideoFound"]).toContain(bad.error.name);
    expect(done.credits_charged).toBe(4);
    expect(before - (await creditsAvailable(h.stack, a.auth))).toBe(4);
    const failedJob = await call(h.stack, "GET", `/jobs/${bad.job_id}`, { headers: a.auth });
    expect(failedJob.body.status).toBe("failed");
    expect(failedJob.body.credits_charged ?? 0).toBe(0);
  });
});

describe("a batch's limits, replays and owner", () => {
  it("refuses more links than the plan's max_batch_items, in the error shape, naming the limit", async () => {
    const a = await h.newKey("free");
    const urls = Array.from({ length: 11 }, (_, i) => `${h.videos.origin}/many/${i}.mp4`);
    const res = await call(h.stack, "POST", "/batches", {
      body: { urls, count: 2 },
      headers: a.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      name: "BadRequest",
      code: 400,
      className: "bad-request",
      data: { name: "InvalidRequest" },
    });
    expect(res.body.message).toContain("max_batch_items is 10");
    expect(res.body.data.errors[0].param).toBe("urls");
    const none = await call(h.stack, "GET", "/batches", { headers: a.auth });
    expect(none.body.total).toBe(0);
  });

  it("refuses a batch past max_active_batches with RateLimited, naming the limit", async () => {
    const a = await h.newKey("free"); // 1 active batch
    const first = await call(h.stack, "POST", "/batches", {
      body: {
        urls: [serve("/active/0.mp4"), serve("/active/1.mp4"), serve("/active/2.mp4")],
        count: 2,
      },
      headers: a.auth,
    });
    expect(first.status).toBe(201);
    const second = await call(h.stack, "POST", "/batches", {
      body: { urls: [serve("/active/3.mp4")], count: 2 },
      headers: a.auth,
    });
    expect(second.status).toBe(429);
    expect(second.body.data.name).toBe("RateLimited");
    expect(second.body.message).toContain("max_active_batches is 1");
    expect(second.headers.get("retry-after")).toBeTruthy();
    await finished(first.body.id, a.auth);
    // Once the first has completed, a new one is taken.
    const third = await call(h.stack, "POST", "/batches", {
      body: { urls: [serve("/active/3.mp4")], count: 2 },
      headers: a.auth,
    });
    expect(third.status).toBe(201);
    await finished(third.body.id, a.auth);
  });

  it("a link that is not a video becomes a failed item without a job; the others run", async () => {
    const a = await h.newKey("starter");
    const before = await creditsAvailable(h.stack, a.auth);
    const res = await call(h.stack, "POST", "/batches", {
      body: { urls: ["ftp://example.com/a.mp4", serve("/mixed/0.mp4")], timestamps: [0.5] },
      headers: a.auth,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [bad, good] = res.body.items.data;
    expect(bad).toMatchObject({ index: 1, status: "failed", job_id: null });
    expect(bad.error.name).toBe("InvalidUrl");
    expect(good.job_id).toMatch(/^[0-9a-f-]{36}$/);
    const done = await finished(res.body.id, a.auth);
    expect(done.counts).toMatchObject({ total: 2, completed: 1, failed: 1 });
    expect(before - (await creditsAvailable(h.stack, a.auth))).toBe(1);
  });

  it("replays an Idempotency-Key with the same body, refuses it with another", async () => {
    const a = await h.newKey("starter");
    const body = { urls: [serve("/idem/0.mp4"), serve("/idem/1.mp4")], timestamps: [0.5] };
    const headers = { ...a.auth, "idempotency-key": `batch-${crypto.randomUUID()}` };
    const first = await call(h.stack, "POST", "/batches", { body, headers });
    const again = await call(h.stack, "POST", "/batches", { body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.items.data.map((i: any) => i.job_id)).toEqual(
      first.body.items.data.map((i: any) => i.job_id),
    );
    const other = await call(h.stack, "POST", "/batches", {
      body: { ...body, timestamps: [1.0] },
      headers,
    });
    expect(other.status).toBe(400);
    expect(other.body.data.name).toBe("InvalidRequest");
    expect(other.body.message).toContain("Idempotency-Key");
    const list = await call(h.stack, "GET", "/batches", { headers: a.auth });
    expect(list.body.total).toBe(1);
    expect(list.body.data[0].id).toBe(first.body.id);
    await finished(first.body.id, a.auth);
  });

  it("another account gets 404 for the batch and never lists it", async () => {
    const a = await h.newKey("starter");
    const b = await h.newKey("starter");
    const created = await call(h.stack, "POST", "/batches", {
      body: { urls: [serve("/owner/0.mp4")], timestamps: [0.5] },
      headers: a.auth,
    });
    expect(created.status).toBe(201);
    const read = await call(h.stack, "GET", `/batches/${created.body.id}`, { headers: b.auth });
    expect(read.status).toBe(404);
    expect(read.body.data.name).toBe("NotFound");
    const list = await call(h.stack, "GET", "/batches", { headers: b.auth });
    expect(list.body).toMatchObject({ total: 0, data: [] });
    const job = created.body.items.data[0].job_id;
    expect((await call(h.stack, "GET", `/jobs/${job}`, { headers: b.auth })).status).toBe(404);
    await finished(created.body.id, a.auth);
  });
});

/** Serves an RSS feed of `links` at `path`: yt-dlp's generic extractor reads it as a playlist. */
function serveFeed(path: string, links: string[]): string {
  const items = links
    .map((link, i) => `<item><title>v${i}</title><link>${link}</link><guid>v${i}</guid></item>`)
    .join("");
  const xml = `<?xml version="1.0"?><rss version="2.0"><channel><title>Local list</title>${items}</channel></rss>`;
  h.videos.route(path, (_req, res) => {
    res.writeHead(200, { "content-type": "application/rss+xml" });
    res.end(xml);
  });
  return `${h.videos.origin}${path}`;
}

describe("a batch of one playlist link (url)", () => {
  it("a playlist of 3 local videos: a batch of 3 completed jobs, in the list's order", async () => {
    const a = await h.newKey("starter");
    const videos = [0, 1, 2].map((i) => serve(`/list/${i}.mp4`));
    const before = await creditsAvailable(h.stack, a.auth);
    const res = await call(h.stack, "POST", "/batches", {
      body: { url: serveFeed("/list/feed.xml", videos), timestamps: [0.5] },
      headers: a.auth,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.playlist).toMatchObject({ title: "Local list", items: 3, truncated: false });
    expect(res.body.items.data.map((i: { url: string }) => i.url)).toEqual(videos);
    const done = await finished(res.body.id, a.auth);
    expect(done.counts).toMatchObject({ total: 3, completed: 3, failed: 0 });
    expect(before - (await creditsAvailable(h.stack, a.auth))).toBe(3);
    for (const path of ["/list/0.mp4", "/list/1.mp4", "/list/2.mp4"]) {
      expect(h.videos.requests.some((r) => r.url.split("?")[0] === path)).toBe(true);
    }
  });

  it("a list longer than max_batch_items is truncated to its first ones, and the batch says so", async () => {
    const a = await h.newKey("free");
    const videos = Array.from({ length: 12 }, (_, i) => serve(`/long/${i}.mp4`));
    const res = await call(h.stack, "POST", "/batches", {
      body: { url: serveFeed("/long/feed.xml", videos), timestamps: [0.5] },
      headers: a.auth,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.counts.total).toBe(10);
    expect(res.body.items.data.map((i: { url: string }) => i.url)).toEqual(videos.slice(0, 10));
    expect(res.body.playlist).toMatchObject({ items: 10, truncated: true });
    expect(res.body.playlist.note).toContain("first 10");
    const done = await finished(res.body.id, a.auth);
    expect(done.counts).toMatchObject({ total: 10, completed: 10 });
    expect(done.playlist.truncated).toBe(true);
    expect(h.videos.requests.some((r) => r.url.startsWith("/long/10.mp4"))).toBe(false);
  });

  it("an entry the edge refuses becomes a failed item without a job; the others run", async () => {
    const a = await h.newKey("starter");
    const good = serve("/badentry/0.mp4");
    const res = await call(h.stack, "POST", "/batches", {
      body: {
        url: serveFeed("/badentry/feed.xml", ["ftp://example.com/a.mp4", good]),
        timestamps: [0.5],
      },
      headers: a.auth,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [bad, ok] = res.body.items.data;
    expect(bad).toMatchObject({ index: 1, status: "failed", job_id: null });
    expect(bad.error.name).toBe("InvalidUrl");
    expect(ok.job_id).toMatch(/^[0-9a-f-]{36}$/);
    const done = await finished(res.body.id, a.auth);
    expect(done.counts).toMatchObject({ total: 2, completed: 1, failed: 1 });
  });

  it("a link to one video is a batch of one item, with a note", async () => {
    const a = await h.newKey("starter");
    const link = serve("/single/only.mp4");
    const res = await call(h.stack, "POST", "/batches", {
      body: { url: link, timestamps: [0.5] },
      headers: a.auth,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.items.data.map((i: { url: string }) => i.url)).toEqual([link]);
    expect(res.body.playlist.note).toContain("one video");
    await finished(res.body.id, a.auth);
  });

  it("refuses urls and url together, and neither, in the error shape; nothing created", async () => {
    const a = await h.newKey("starter");
    const both = await call(h.stack, "POST", "/batches", {
      body: { url: serve("/both/a.mp4"), urls: [serve("/both/b.mp4")] },
      headers: a.auth,
    });
    expect(both.status).toBe(400);
    expect(
      both.body.data.errors.find((p: { param: string }) => p.param === "url").message,
    ).toContain("not both");
    const neither = await call(h.stack, "POST", "/batches", {
      body: { count: 2 },
      headers: a.auth,
    });
    expect(neither.status).toBe(400);
    expect((await call(h.stack, "GET", "/batches", { headers: a.auth })).body.total).toBe(0);
  });
});

describe("the SDK's batches", () => {
  it("creates, reads and lists a batch", async () => {
    const a = await h.newKey("starter");
    const stills = new Stills({ apiKey: a.key, baseUrl: h.stack.apiUrl });
    const created = await stills.batches.create({
      urls: [serve("/sdk/0.mp4"), serve("/sdk/1.mp4")],
      timestamps: [0.5],
    });
    expect(created.counts.total).toBe(2);
    const done = await finished(created.id, a.auth);
    const read = await stills.batches.get(created.id, { limit: 1, skip: 1 });
    expect(read.status).toBe("completed");
    expect(read.items).toMatchObject({ total: 2, limit: 1, skip: 1 });
    expect(read.items.data.map((item) => item.job_id)).toEqual([done.items.data[1].job_id]);
    const listed = await stills.batches.list().toArray();
    expect(listed.map((batch) => batch.id)).toEqual([created.id]);
  });
});

describe("fairness", () => {
  it("while A's batch of 30 runs, B's single job starts at once and ends within one job's time of its time alone", async () => {
    const a = await h.newKey("pro"); // 10 jobs at once
    const b = await h.newKey("starter");
    const body = { timestamps: [0.5] };
    const timed = async (auth: Record<string, string>, url: string) => {
      const started = Date.now();
      const res = await call(h.stack, "POST", "/jobs?wait=true", {
        body: { ...body, url },
        headers: auth,
      });
      expect(res.body.status).toBe("completed");
      return Date.now() - started;
    };
    // Alone: one of A's jobs (one job's time), and B's.
    const aSolo = await timed(a.auth, serve("/fair/a-solo.mp4"));
    const bSolo = await timed(b.auth, serve("/fair/b-solo.mp4"));

    const log = h.videos.requests;
    const firstRequest = (path: string) => log.findIndex((r) => r.url.split("?")[0] === path);
    const aPaths = Array.from({ length: 30 }, (_, i) => `/fair/a${i}.mp4`);
    const batch = await call(h.stack, "POST", "/batches", {
      body: { ...body, urls: aPaths.map(serve) },
      headers: a.auth,
    });
    expect(batch.status).toBe(201);
    // A runs: some of its items have started.
    await until("A's items to start", async () =>
      aPaths.filter((p) => firstRequest(p) >= 0).length >= 4 ? true : undefined,
    );
    const arrivedAt = log.length;
    // B comes while most of A's batch is still to start.
    expect(aPaths.filter((p) => firstRequest(p) < 0).length).toBeGreaterThan(10);
    const bLoaded = await timed(b.auth, serve("/fair/b.mp4"));
    const bStart = firstRequest("/fair/b.mp4");
    expect(bStart).toBeGreaterThanOrEqual(arrivedAt);
    // A's items that started after B arrived and before B did: at most the extractor's slots
    // (2 here) could have been handed over in that moment; a queue behind A would be 8.
    const aheadOfB = aPaths.filter((p) => {
      const at = firstRequest(p);
      return at >= arrivedAt && at < bStart;
    }).length;
    console.info(
      `fairness: B alone ${bSolo} ms, under A's batch ${bLoaded} ms, A's job alone ${aSolo} ms, A's items started ahead of B ${aheadOfB}`,
    );
    expect(aheadOfB).toBeLessThanOrEqual(2);
    // B's time under load: its time alone, one of A's jobs' time, and a margin for the two
    // cores it shares with A's running jobs (measured below 1 s; see decision 0340).
    expect(bLoaded, `B alone ${bSolo} ms, A's job ${aSolo} ms`).toBeLessThanOrEqual(
      bSolo + aSolo + 1500,
    );
    const done = await finished(batch.body.id, a.auth);
    expect(done.counts).toMatchObject({ total: 30, completed: 30 });
    expect(done.credits_charged).toBe(30);
  }, 240_000);
});
