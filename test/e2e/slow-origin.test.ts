// Slow origin on the real stack, scaled down: the source sends the first 4 KiB of a video and
// then one byte every half second (the issue's "one byte every 10 s"), with the minimum rate
// set to 4 KiB/s after a 2 s grace over a 2 s window and a 120 s job deadline. Each such job
// must end as DownloadFailed within the minimum-rate window, uncharged; and one client (an
// account, or the demo from one address) holding eight of them must not keep a paying job
// from starting: the slow client may hold both extractor slots, and the paying job, whose
// account runs nothing there, starts at once beside them (decision 0190).
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import { call, type Harness, startHarness } from "./support/harness.ts";

const GRACE_SECONDS = 2;
const WINDOW_SECONDS = 2;
const MIN_BYTES_PER_SECOND = 4096;
const DEADLINE_SECONDS = 120;

let h: Harness;
let goodVideo: string;
/** Every request the slow origin answered: when it began, when the reader hung up. */
const drips: { path: string; began: number; ended: number | null; sent: number }[] = [];

function slowRoute(request: http.IncomingMessage, response: http.ServerResponse) {
  const head = Buffer.alloc(4096);
  head.writeUInt32BE(24, 0);
  head.write("ftypisom", 4, "latin1");
  response.writeHead(200, { "content-type": "video/mp4", "content-length": 1_000_000 });
  if (request.method === "HEAD") return response.end();
  const drip = {
    path: request.url ?? "",
    began: Date.now(),
    ended: null as number | null,
    sent: 0,
  };
  drips.push(drip);
  response.write(head);
  drip.sent = head.length;
  const timer = setInterval(() => {
    response.write(Buffer.from([0]));
    drip.sent += 1;
  }, 500);
  response.on("close", () => {
    clearInterval(timer);
    drip.ended = Date.now();
  });
}

beforeAll(async () => {
  h = await startHarness({
    own: "it needs short source-rate windows and job deadlines",
    EXTRACTOR_SOURCE_GRACE_SECONDS: String(GRACE_SECONDS),
    EXTRACTOR_SOURCE_RATE_WINDOW_SECONDS: String(WINDOW_SECONDS),
    EXTRACTOR_SOURCE_MIN_BYTES_PER_SECOND: String(MIN_BYTES_PER_SECOND),
    EXTRACTOR_JOB_TIMEOUT_SECONDS: String(DEADLINE_SECONDS),
    STILLS_DEMO_DAILY_LIMIT: "50",
  });
  goodVideo = h.serveVideo("/media/good.mp4", await makeTestVideo({ durationSeconds: 4 }));
  for (let i = 0; i < 16; i++) h.videos.route(`/slow/${i}.mp4`, slowRoute);
});

afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const finished = (status: string) => status === "completed" || status === "failed";

/** A paying job, submitted now; resolves with the slow jobs still unfinished when it completed. */
async function payingJobAlongside(readSlow: () => Promise<{ status: string }[]>) {
  const payer = await h.newKey("starter");
  const created = await call(h.stack, "POST", "/jobs", {
    body: { url: goodVideo, count: 2 },
    headers: payer.auth,
  });
  expect(created.status).toBe(201);
  // Once a second: polling must stay inside the plan's requests per minute.
  for (let i = 0; i < 120; i++) {
    const job = (await call(h.stack, "GET", `/jobs/${created.body.id}`, { headers: payer.auth }))
      .body;
    if (finished(job.status)) {
      const slow = await readSlow();
      expect(job.status).toBe("completed");
      expect(job.credits_charged).toBe(1);
      return slow.filter((s) => !finished(s.status)).length;
    }
    await sleep(1000);
  }
  throw new Error(`the paying job did not finish\n${h.stack.logTail("extractor")}`);
}

async function waitAll<T extends { status: string }>(read: () => Promise<T[]>): Promise<T[]> {
  for (let i = 0; i < 180; i++) {
    const all = await read();
    if (all.every((j) => finished(j.status))) return all;
    await sleep(1000);
  }
  throw new Error(`slow jobs still running\n${h.stack.logTail("extractor")}`);
}

function expectCutAtTheMinimumRate(error: { name: string; message: string }) {
  expect(error.name).toBe("DownloadFailed");
  expect(error.message).toMatch(new RegExp(`below the minimum of ${MIN_BYTES_PER_SECOND} bytes/s`));
}

/** Every drip of these paths ended within grace + window (plus scheduling), far from 120 s. */
function expectDripsEndedInTheWindow(paths: string[]) {
  const mine = drips.filter((d) => paths.some((p) => d.path.startsWith(p)));
  expect(mine.length).toBeGreaterThanOrEqual(paths.length);
  for (const drip of mine) {
    expect(drip.ended).not.toBeNull();
    expect(((drip.ended as number) - drip.began) / 1000).toBeLessThan(
      GRACE_SECONDS + WINDOW_SECONDS + 4,
    );
    expect(drip.sent).toBeLessThan(4096 + 20);
  }
}

describe("a slow-drip source", () => {
  it("ends within the minimum-rate window, and 8 of them from one account do not hold up a paying job", async () => {
    const slowAccount = await h.newKey("pro");
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const created = await call(h.stack, "POST", "/jobs", {
        body: { url: `${h.videos.origin}/slow/${i}.mp4`, count: 3, end: 30 },
        headers: slowAccount.auth,
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    // One list request per look, inside the plan's requests per minute.
    const readSlow = async () => {
      const list = await call(h.stack, "GET", "/jobs?limit=100", { headers: slowAccount.auth });
      expect(list.status).toBe(200);
      return ids.map((id) => list.body.data.find((job: { id: string }) => job.id === id));
    };
    // The account's jobs run two at a time, each cut after ~2–4 s: a paying job that had to
    // wait for them would find all eight finished.
    const unfinished = await payingJobAlongside(readSlow);
    expect(unfinished).toBeGreaterThanOrEqual(4);

    const slow = await waitAll(readSlow);
    for (const job of slow) {
      expect(job.status).toBe("failed");
      expectCutAtTheMinimumRate(job.error);
      expect(job.credits_charged).toBe(0);
    }
    expectDripsEndedInTheWindow(ids.map((_, i) => `/slow/${i}.mp4`));
    const usage = (await call(h.stack, "GET", "/usage", { headers: slowAccount.auth })).body;
    expect(usage.credits).toMatchObject({ plan: 5000, available: 5000 });
    expect(usage.this_period.credits_reserved).toBe(0);
  }, 300_000);

  it("the demo from one address is one tenant too: its slow previews do not hold up a paying job", async () => {
    const ids: string[] = [];
    for (let i = 8; i < 14; i++) {
      const created = await call(h.stack, "POST", "/demo", {
        body: { url: `${h.videos.origin}/slow/${i}.mp4` },
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    // Read from D1: the public demo endpoint allows an address 60 requests a minute.
    const readSlow = async () => {
      const rows = (await h.query(
        `SELECT id, status, error FROM demo_jobs WHERE id IN (${ids.map((id) => `'${id}'`).join()})`,
      )) as { status: string; error: string | null }[];
      expect(rows).toHaveLength(ids.length);
      return rows.map((row) => ({ ...row, error: row.error ? JSON.parse(row.error) : null }));
    };
    const unfinished = await payingJobAlongside(readSlow);
    expect(unfinished).toBeGreaterThanOrEqual(3);

    await waitAll(readSlow);
    // What a client sees of each.
    for (const id of ids) {
      const demo = (await call(h.stack, "GET", `/demo/${id}`)).body;
      expect(demo.status).toBe("failed");
      expectCutAtTheMinimumRate(demo.error);
    }
    expectDripsEndedInTheWindow(ids.map((_, i) => `/slow/${i + 8}.mp4`));
  }, 300_000);
});
