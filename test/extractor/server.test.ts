// POST /extract end to end against a fake edge, with the source opener replaced by local files
// (or the real one, for sources that misbehave).
import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import {
  DEFAULT_MEDIA_NICE,
  NEWCOMER_NICE,
  type RunPriority,
  setMediaNice,
  YIELD_STEPS,
} from "../../extractor/priority.ts";
import { createExtractorServer, type JobEnd } from "../../extractor/server.ts";
import type { OpenSource } from "../../extractor/source-input.ts";
import { sourceOpener } from "../../extractor/source-input.ts";
import { PROGRESS_STAGES } from "../../schema/api.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { startLiveOrigin } from "../sources/support/hls-live-origin.ts";
import { makeAudioOnly, makeTestVideo, readImagePattern } from "../support/videos.ts";
import type { FakeEdge } from "./fake-edge.ts";
import { extractRequest, startFakeEdge } from "./fake-edge.ts";

process.env.EXTRACTOR_LOG ??= "silent";

const TOKEN = "internal-secret";
let edge: FakeEdge;
let server: Server | null = null;
let base = "";

beforeAll(async () => {
  edge = await startFakeEdge();
});
afterAll(() => edge.close());
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** Ends of accepted jobs, by job id, in the order they happen. */
const ended = new Map<string, JobEnd>();
const endWaiters = new Map<string, (end: JobEnd) => void>();
function onJobEnd(end: JobEnd) {
  ended.set(end.jobId, end);
  endWaiters.get(end.jobId)?.(end);
}
/** Resolves when the job with this id has ended (its result posted, refused or cancelled). */
function endOf(jobId: string): Promise<JobEnd> {
  ended.delete(jobId);
  return new Promise((resolve) => endWaiters.set(jobId, resolve));
}

/** Attempts as they took their slots, in order, and each one's share of the cores. */
let started: string[] = [];
const shares = new Map<string, { newcomer: boolean; priority: RunPriority }>();

async function startServer(
  openSource: OpenSource,
  concurrency = 2,
  room: { waitingLimit?: number; tenantWaitingLimit?: number; newcomerSlots?: number } = {},
) {
  started = [];
  server = createExtractorServer({
    token: TOKEN,
    concurrency,
    ...room,
    openSource,
    retryAfterSeconds: 7,
    onJobEnd,
    onJobStart: ({ jobId, newcomer, priority }) => {
      started.push(jobId);
      shares.set(jobId, { newcomer, priority });
    },
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const localFile =
  (path: string): OpenSource =>
  async () => ({
    input: path,
    close: async () => {},
    bytesRead: () => 0,
  });

function request(overrides: Partial<ExtractRequest> = {}): ExtractRequest {
  return extractRequest({ base_url: edge.baseUrl, token: edge.token }, overrides);
}

/** Posts a job and waits for it to end: the 202 first, then how the background job ended. */
async function run(body: ExtractRequest) {
  const end = endOf(body.job_id);
  const response = await post(body);
  expect(response.status).toBe(202);
  return { response, accepted: (await response.json()) as { attempt_id: string }, end: await end };
}

function post(body: unknown, token: string | null = TOKEN) {
  return fetch(`${base}/extract`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("POST /extract", () => {
  it("answers 202 at once, then runs the job, uploads the frames and posts the result", async () => {
    await startServer(localFile(await makeTestVideo({ durationSeconds: 3 })));
    const results = edge.results.length;
    const { accepted, end } = await run(request());
    expect(end).toMatchObject({ status: "completed", delivery: "posted" });
    const result = edge.results[results];
    expect(result.attempt_id).toBe(accepted.attempt_id);
    expect(result).toMatchObject({
      job_id: request().job_id,
      kind: "job",
      status: "completed",
      error: null,
    });
    expect(result.attempt_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.frames.map((f) => f.key)).toEqual(
      [1, 2, 3].map((i) => `job/${request().job_id}/${result.attempt_id}/frame-000${i}.jpg`),
    );
    const numbers = await Promise.all(
      result.frames.map(
        async (f) =>
          (await readImagePattern(edge.files.get(f.key as string)?.bytes as Buffer)).number,
      ),
    );
    expect(numbers).toEqual([15, 45, 75]);
  });

  it("each call without an attempt id is a new attempt with its own keys", async () => {
    await startServer(localFile(await makeTestVideo({ durationSeconds: 3 })));
    await run(request());
    await run(request());
    const [a, b] = edge.results.slice(-2);
    expect(a.attempt_id).not.toBe(b.attempt_id);
  });

  it("works as the attempt the edge named, under that attempt's keys", async () => {
    await startServer(localFile(await makeTestVideo({ durationSeconds: 3 })));
    const attempt = "a7a7a7a7-0000-4000-8000-000000000001";
    const { accepted, end } = await run(request({ attempt_id: attempt }));
    expect(accepted.attempt_id).toBe(attempt);
    expect(end.delivery).toBe("posted");
    const result = edge.results.at(-1);
    expect(result?.attempt_id).toBe(attempt);
    expect(
      result?.frames.every((f) => f.key?.startsWith(`job/${request().job_id}/${attempt}/`)),
    ).toBe(true);
  });

  it("a bad file ends as a failed job with its JobError, still reported to the edge", async () => {
    await startServer(localFile(await makeAudioOnly()));
    const { end } = await run(request());
    expect(end).toMatchObject({ status: "failed", delivery: "posted" });
    expect(edge.results.at(-1)).toMatchObject({
      status: "failed",
      error: { name: "NoVideoFound" },
    });
  });

  it("a source error (private video) passes through with its name and user message", async () => {
    await startServer(async () => {
      throw Object.assign(new Error("403 from origin"), {
        name: "PrivateContent",
        userMessage: "This video is private.",
      });
    });
    await run(request());
    expect(edge.results.at(-1)?.error).toEqual({
      name: "PrivateContent",
      message: "403 from origin",
      userMessage: "This video is private.",
    });
  });

  it("a result the edge cannot take stays undelivered (its lease runs out; the edge retries)", async () => {
    await startServer(localFile(await makeTestVideo({ durationSeconds: 3 })));
    edge.resultsStatus = 500;
    try {
      const { end } = await run(request());
      expect(end).toMatchObject({ status: "completed", delivery: "undelivered" });
    } finally {
      edge.resultsStatus = 202;
    }
  });

  it("401 without the right bearer token", async () => {
    await startServer(localFile("/nonexistent"));
    expect((await post(request(), null)).status).toBe(401);
    expect((await post(request(), "wrong")).status).toBe(401);
    expect((await post(request(), `${TOKEN}x`)).status).toBe(401);
  });

  it("400 on a body that is not a valid ExtractRequest", async () => {
    await startServer(localFile("/nonexistent"));
    expect((await post("{not json")).status).toBe(400);
    const missing = await post({ ...request(), callback: undefined });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { issues: string[] }).issues.join()).toMatch(/callback/);
    const badMode = await post(
      request({ options: { ...request().options, mode: "count", count: undefined } }),
    );
    expect(badMode.status).toBe(400);
    const badResolution = await post({
      ...request(),
      options: { ...request().options, resolution: 1000 },
    });
    expect(badResolution.status).toBe(400);
  });

  it("503 with Retry-After when every slot is busy and the room is full", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const video = await makeTestVideo({ durationSeconds: 3 });
    await startServer(
      async () => {
        await gate;
        return { input: video, close: async () => {}, bytesRead: () => 0 };
      },
      1,
      { waitingLimit: 0 },
    );
    const firstEnd = endOf(request().job_id);
    expect((await post(request())).status).toBe(202);
    const refused = await post(request({ job_id: "another-job" }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("7");
    expect(await refused.json()).toMatchObject({
      error: "busy",
      why: "pool",
      running: 1,
      waiting: 0,
      capacity: 1,
    });
    release();
    expect((await firstEnd).delivery).toBe("posted");
    // The slot is given back once the job has ended.
    expect((await run(request({ job_id: "another-job" }))).end.delivery).toBe("posted");
  });
});

/**
 * An opener that holds each job at its source until released: jobs that hold slots. `release`
 * lets every job through; `releaseJob` one.
 */
function gatedOpener(video: string) {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const opened: string[] = [];
  const own = new Map<string, () => void>();
  const openSource: OpenSource = async (request) => {
    opened.push(request.job_id);
    await Promise.race([gate, new Promise<void>((resolve) => own.set(request.job_id, resolve))]);
    return { input: video, close: async () => {}, bytesRead: () => 0 };
  };
  return {
    openSource,
    opened,
    release: () => release(),
    releaseJob: (jobId: string) => {
      const go = own.get(jobId);
      if (!go) throw new Error(`${jobId} has not reached its source`);
      go();
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function accept(body: ExtractRequest) {
  const response = await post(body);
  expect(response.status).toBe(202);
  return (await response.json()) as { accepted: boolean; attempt_id: string; started: boolean };
}

async function health() {
  return (await (await fetch(`${base}/healthz`)).json()) as {
    running: number;
    waiting: number;
    capacity: number;
  };
}

describe("scheduling (extractor/scheduler.ts)", () => {
  it("one tenant alone takes every slot, and the rest wait in the room, not in a retry", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource, 3);
    const ids = ["job-a-1", "job-a-2", "job-a-3", "job-a-4", "job-a-5"];
    const ends = ids.map(endOf);
    const answers = [];
    for (const id of ids) answers.push(await accept(request({ job_id: id })));
    expect(answers.map((a) => a.started)).toEqual([true, true, true, false, false]);
    await vi.waitFor(() => expect(gated.opened).toEqual(ids.slice(0, 3)));
    expect(await health()).toMatchObject({ running: 3, waiting: 2, capacity: 3 });
    // A slot freed is taken in the same turn: never a free slot while an attempt waits.
    gated.releaseJob("job-a-2");
    expect((await ends[1]).delivery).toBe("posted");
    // (The end is reported just before the run's promise settles and gives the slot back.)
    await vi.waitFor(() => expect(started).toEqual(["job-a-1", "job-a-2", "job-a-3", "job-a-4"]));
    expect(await health()).toMatchObject({ running: 3, waiting: 1 });
    gated.release();
    for (const end of ends) expect((await end).delivery).toBe("posted");
    expect(started).toEqual(ids);
    expect(await health()).toMatchObject({ running: 0, waiting: 0 });
  });

  it("the next free slot goes to the tenant running the fewest, not to the first in line", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource, 2, { newcomerSlots: 0 });
    const a = ["job-a-1", "job-a-2", "job-a-3", "job-a-4"];
    const ends = [...a, "job-b-1"].map(endOf);
    for (const id of a) await accept(request({ job_id: id }));
    // B comes last, behind two of A's waiting attempts.
    const b = await accept(request({ job_id: "job-b-1", kind: "demo", tenant: "demo:ab12" }));
    expect(b.started).toBe(false);
    await vi.waitFor(() => expect(gated.opened).toEqual(["job-a-1", "job-a-2"]));
    gated.releaseJob("job-a-1");
    await ends[0];
    await vi.waitFor(() => expect(gated.opened).toEqual(["job-a-1", "job-a-2", "job-b-1"]));
    gated.release();
    for (const end of ends) expect((await end).delivery).toBe("posted");
    expect(started).toEqual(["job-a-1", "job-a-2", "job-b-1", "job-a-3", "job-a-4"]);
  });

  it("one tenant fills at most its share of the room; another still gets in", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource, 1, {
      waitingLimit: 3,
      tenantWaitingLimit: 2,
      newcomerSlots: 0,
    });
    const ends = ["job-a-1", "job-a-2", "job-a-3", "job-b-1"].map(endOf);
    await accept(request({ job_id: "job-a-1" }));
    await accept(request({ job_id: "job-a-2" }));
    await accept(request({ job_id: "job-a-3" }));
    const again = await post(request({ job_id: "job-a-4" }));
    expect(again.status).toBe(503);
    expect(again.headers.get("retry-after")).toBe("7");
    expect(await again.json()).toMatchObject({ error: "busy", why: "tenant" });
    await accept(request({ job_id: "job-b-1", kind: "demo", tenant: "demo:ab12" }));
    // The room is full now, for every tenant.
    const full = await post(request({ job_id: "job-c-1", tenant: "account:c1" }));
    expect(full.status).toBe(503);
    expect(await full.json()).toMatchObject({ why: "pool", running: 1, waiting: 3 });
    gated.release();
    for (const end of ends) expect((await end).delivery).toBe("posted");
    expect(started).toEqual(["job-a-1", "job-b-1", "job-a-2", "job-a-3"]);
  });

  it("a tenant that runs nothing starts at once, even while another holds every slot", async () => {
    // A base the yielding runs can rise from (at the default, 19, they have nowhere to go).
    setMediaNice(5);
    onTestFinished(() => setMediaNice(DEFAULT_MEDIA_NICE));
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource, 2); // newcomers: 2 more by default
    const a = ["job-a-1", "job-a-2", "job-a-3"];
    const ends = [...a, "job-b-1"].map(endOf);
    for (const id of a) await accept(request({ job_id: id }));
    const b = await accept(request({ job_id: "job-b-1", kind: "demo", tenant: "demo:ab12" }));
    expect(b.started).toBe(true);
    await vi.waitFor(() => expect(gated.opened).toEqual(["job-a-1", "job-a-2", "job-b-1"]));
    expect(await health()).toMatchObject({ running: 3, waiting: 1, capacity: 2 });
    // While B, the newcomer, runs, A's runs yield their share of the cores to it.
    const share = (id: string) => shares.get(id);
    expect(share("job-b-1")).toMatchObject({ newcomer: true });
    expect(share("job-b-1")?.priority.yielding).toBe(false);
    // And its own processes run at 0, the others' at the base + 10, at most 19 (decisions 0284,
    // 0377: at the default base of 19 they stay there).
    expect(share("job-b-1")?.priority.nice).toBe(NEWCOMER_NICE);
    expect(share("job-a-1")?.priority.nice).toBe(5 + YIELD_STEPS);
    expect([share("job-a-1")?.priority.yielding, share("job-a-2")?.priority.yielding]).toEqual([
      true,
      true,
    ]);
    // B ends first; A's third still waits for one of A's own slots.
    gated.releaseJob("job-b-1");
    expect((await ends[3]).delivery).toBe("posted");
    await sleep(100); // time for B's slot to be handed on, if it wrongly were
    expect(started).toEqual(["job-a-1", "job-a-2", "job-b-1"]);
    // B gone, A's runs take their share back.
    expect([share("job-a-1")?.priority.yielding, share("job-a-2")?.priority.yielding]).toEqual([
      false,
      false,
    ]);
    gated.release();
    for (const end of ends) expect((await end).delivery).toBe("posted");
    expect(started).toEqual(["job-a-1", "job-a-2", "job-b-1", "job-a-3"]);
  });

  it("a request without a tenant is its own: never held back by another's attempts", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource, 3);
    const ends = ["job-a-1", "job-a-2", "job-x-1"].map(endOf);
    await accept(request({ job_id: "job-a-1" }));
    await accept(request({ job_id: "job-a-2" }));
    const x = await accept(request({ job_id: "job-x-1", tenant: undefined }));
    expect(x.started).toBe(true);
    await vi.waitFor(() => expect(gated.opened).toEqual(["job-a-1", "job-a-2", "job-x-1"]));
    gated.release();
    for (const end of ends) expect((await end).delivery).toBe("posted");
  });
});

describe("a live job between reloads (decision 0382)", () => {
  it("holds no slot while it waits for its stream: the tenant's next job runs meanwhile", async () => {
    // One slot, no newcomer places: before, the second job waited for the live one to end.
    const video = await makeTestVideo({ durationSeconds: 3 });
    const stream = await startLiveOrigin({ clock: 20.2 });
    onTestFinished(() => stream.close());
    const live = sourceOpener({
      allowPrivate: true,
      maxSourceBytes: 50_000_000,
      sourceMinRate: { graceMs: 5_000, windowMs: 5_000, bytesPerSecond: 1 },
    });
    const file = localFile(video);
    await startServer(
      (asked, context) => (asked.options.mode === "live" ? live : file)(asked, context),
      1,
      { newcomerSlots: 0 },
    );
    const liveEnd = endOf("job-live");
    const nextEnd = endOf("job-a-2");
    await accept(
      request({
        job_id: "job-live",
        url: stream.url,
        options: {
          mode: "live",
          every: 2,
          duration: 4,
          format: "png",
          resolution: 360,
          output: "urls",
        },
      }),
    );
    await accept(request({ job_id: "job-a-2" }));
    const liveEnded = await liveEnd;
    // The second job took the slot while the live one waited for segment 10 to air.
    expect(started).toEqual(["job-live", "job-a-2"]);
    expect((await nextEnd).delivery).toBe("posted");
    expect(liveEnded.delivery).toBe("posted");
    // And the live job, back in without queueing, still caught both frames: 199 (segment 9's
    // last, on air at the start) and 2 s of stream later, 219.
    const result = edge.results.find((r) => r.job_id === "job-live");
    expect(result?.status).toBe("completed");
    const numbers = await Promise.all(
      (result?.frames ?? []).map(
        async (f) =>
          (await readImagePattern(edge.files.get(f.key as string)?.bytes as Buffer)).number,
      ),
    );
    expect(numbers).toEqual([199, 219]);
    expect(stream.segmentsFetched()).toEqual([9, 10]);
    expect(edge.results.find((r) => r.job_id === "job-a-2")?.frames).toHaveLength(3);
  });
});

describe("results the edge refuses", () => {
  it("a 4xx from /internal/results is final: the result is posted once, never again", async () => {
    await startServer(localFile(await makeTestVideo({ durationSeconds: 3 })));
    edge.resultsStatus = 400;
    try {
      const posted = edge.results.length;
      const { end } = await run(request());
      expect(end).toMatchObject({ status: "completed", delivery: "refused" });
      expect(edge.results.length).toBe(posted + 1);
    } finally {
      edge.resultsStatus = 202;
    }
  });

  it("refuses a request whose numbers could overflow (a timestamp of 1.8e302 s)", async () => {
    await startServer(localFile(await makeTestVideo({ durationSeconds: 3 })));
    const posted = edge.results.length;
    const response = await post(
      request({ options: { ...request().options, mode: "timestamps", timestamps: [1.8e302] } }),
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { issues: string[] }).issues.join()).toMatch(
      /options\.timestamps\.0/,
    );
    expect(edge.results.length).toBe(posted);
  });
});

describe("a source's secret address", () => {
  it("never reaches the job's error, even when ffprobe's last line quotes it", async () => {
    const token = "Zq9secretRelayToken0123456789abcdef";
    const relay = createServer((_req, res) => res.writeHead(404).end("gone"));
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const input = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/${token}`;
    try {
      await startServer(async () => ({ input, close: async () => {}, bytesRead: () => 0 }));
      await run(request());
      const error = edge.results.at(-1)?.error;
      expect(error?.name).toBe("NoVideoFound");
      expect(error?.message).toContain("<source>");
      expect(JSON.stringify(edge.results.at(-1))).not.toContain(token);
    } finally {
      relay.close();
    }
  });
});

describe("a source that trickles", () => {
  it("ends the job as DownloadFailed at the minimum rate, long before its deadline", async () => {
    let sent = 0;
    const origin = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": 10_000 });
      const timer = setInterval(() => {
        res.write(Buffer.from([0]));
        sent += 1;
      }, 200);
      res.on("close", () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/slow.mp4`;
    try {
      server = createExtractorServer({
        token: TOKEN,
        concurrency: 2,
        deadlineSeconds: 120,
        onJobEnd,
        openSource: sourceOpener({
          allowPrivate: true,
          maxSourceBytes: 1024 * 1024,
          sourceMinRate: { graceMs: 500, windowMs: 500, bytesPerSecond: 1024 },
        }),
      });
      await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { end } = await run(request({ url }));
      expect(end).toMatchObject({ status: "failed", delivery: "posted" });
      expect(edge.results.at(-1)?.error).toMatchObject({
        name: "DownloadFailed",
        message: expect.stringMatching(/below the minimum of 1024 bytes\/s/),
      });
      // At 5 bytes a second the 10,000 bytes would have taken over half an hour.
      expect(sent).toBeLessThan(20);
    } finally {
      origin.close();
    }
  });
});

describe("the attempt's lease", () => {
  it("is renewed at a third of lease_seconds while the job runs, naming its attempt", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource);
    const attempt = "1ea5e000-0000-4000-8000-000000000001";
    const jobId = "1ea5e000-0000-4000-8000-0000000000aa";
    const end = endOf(jobId);
    const before = edge.leases.length;
    expect(
      (await post(request({ job_id: jobId, attempt_id: attempt, lease_seconds: 1 }))).status,
    ).toBe(202);
    // Held at its source, the job renews until it can go on: two renewals, then release it.
    await vi.waitFor(() => expect(edge.leases.length - before).toBeGreaterThanOrEqual(2), {
      timeout: 5000,
      interval: 50,
    });
    gated.release();
    expect((await end).delivery).toBe("posted");
    const renewals = edge.leases.slice(before);
    expect(
      renewals.every((l) => l.kind === "job" && l.jobId === jobId && l.attemptId === attempt),
    ).toBe(true);
    // The loop stops with the job.
    const after = edge.leases.length;
    await sleep(800);
    expect(edge.leases.length).toBe(after);
  });

  it("answered 409 (another attempt took over) cancels the job, which posts nothing", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource);
    const jobId = "1ea5e000-0000-4000-8000-0000000000bb";
    const results = edge.results.length;
    edge.leaseStatus = 409;
    try {
      const end = endOf(jobId);
      const accepted = await post(
        request({
          job_id: jobId,
          attempt_id: "1ea5e000-0000-4000-8000-000000000002",
          lease_seconds: 1,
        }),
      );
      expect(accepted.status).toBe(202);
      await vi.waitFor(() => expect(edge.leases.some((l) => l.jobId === jobId)).toBe(true), {
        timeout: 5000,
        interval: 50,
      });
      gated.release();
      expect(await end).toMatchObject({ delivery: "cancelled" });
      expect(edge.results.length).toBe(results);
      expect(edge.calls.filter((c) => c.includes(jobId) && c.startsWith("PUT"))).toEqual([]);
    } finally {
      edge.leaseStatus = 200;
    }
  });

  it("is renewed while the attempt waits for a slot, and a 409 then takes it out of the room", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource, 1);
    const holder = "1ea5e000-0000-4000-8000-0000000000c1";
    const waiter = "1ea5e000-0000-4000-8000-0000000000c2";
    const holderEnd = endOf(holder);
    const waiterEnd = endOf(waiter);
    const results = edge.results.length;
    await accept(request({ job_id: holder }));
    const before = edge.leases.length;
    const waiting = await accept(
      request({
        job_id: waiter,
        attempt_id: "1ea5e000-0000-4000-8000-000000000003",
        lease_seconds: 1,
      }),
    );
    expect(waiting.started).toBe(false);
    // Waiting, its lease is renewed: the edge never takes a waiting attempt for a dead one.
    await vi.waitFor(
      () =>
        expect(
          edge.leases.slice(before).filter((l) => l.jobId === waiter).length,
        ).toBeGreaterThanOrEqual(2),
      { timeout: 5000, interval: 50 },
    );
    expect(await health()).toMatchObject({ running: 1, waiting: 1 });
    edge.leaseStatus = 409;
    try {
      expect(await waiterEnd).toMatchObject({ status: "failed", delivery: "cancelled" });
      expect(await health()).toMatchObject({ running: 1, waiting: 0 });
    } finally {
      edge.leaseStatus = 200;
    }
    gated.release();
    expect((await holderEnd).delivery).toBe("posted");
    // It never started, opened its source or posted anything.
    expect(started).toEqual([holder]);
    expect(gated.opened).toEqual([holder]);
    expect(edge.results.length).toBe(results + 1);
  });
});

describe("progress (extractor/output/progress-reporter.ts)", () => {
  const rank = (stage: string) =>
    PROGRESS_STAGES.indexOf(stage as (typeof PROGRESS_STAGES)[number]);

  it("is reported while waiting for a slot and running, stage by stage, the last before the result", async () => {
    const video = await makeTestVideo({ durationSeconds: 6 });
    const gated = gatedOpener(video);
    await startServer(gated.openSource, 1);
    const holder = "9e0e0000-0000-4000-8000-0000000000a1";
    const waiter = "9e0e0000-0000-4000-8000-0000000000a2";
    const holderEnd = endOf(holder);
    const waiterEnd = endOf(waiter);
    const attempt = (n: number) => ({
      attempt_id: `9e0e0000-0000-4000-8000-00000000000${n}`,
      lease_seconds: 30,
    });
    await accept(request({ job_id: holder, ...attempt(1) }));
    const options = { mode: "count", count: 24, format: "jpg", resolution: 720, output: "urls" };
    const waiting = await accept(
      request({ job_id: waiter, ...attempt(2), options: options as ExtractRequest["options"] }),
    );
    expect(waiting.started).toBe(false);
    const of = (jobId: string) => edge.progress.filter((p) => p.jobId === jobId);
    // In the room it says so, once (decision 0288; the cadence is counted in
    // progress-reporter.test.ts): the edge sees it waiting.
    await vi.waitFor(() => expect(of(waiter).length).toBeGreaterThanOrEqual(1), {
      timeout: 5000,
      interval: 50,
    });
    expect(of(waiter).every((p) => p.stage === "waiting" && p.frames_total === null)).toBe(true);
    expect(of(holder).map((p) => p.stage)).toContain("fetching");

    gated.releaseJob(holder);
    expect((await holderEnd).delivery).toBe("posted");
    // Out of the room, the waiter's run reports once its own first interval has passed
    // (decision 0284): held at its source until then, it has something to report.
    await vi.waitFor(() => expect(gated.opened).toContain(waiter), { timeout: 5000, interval: 20 });
    await vi.waitFor(() => expect(of(waiter).some((p) => p.stage !== "waiting")).toBe(true), {
      timeout: 5000,
      interval: 50,
    });
    gated.releaseJob(waiter);
    expect((await waiterEnd).delivery).toBe("posted");
    const result = edge.results.find((r) => r.job_id === waiter);
    const reports = of(waiter);
    // The last report was answered before the result went: it is here now, and says it all.
    expect(reports.at(-1)).toMatchObject({
      attempt_id: attempt(2).attempt_id,
      stage: "finishing",
      frames_done: 24,
      frames_total: 24,
    });
    expect(result?.frames.length).toBe(24);
    // Waiting once; the stages after it come at most one report an interval (decision 0288),
    // so some may be passed over, never reordered.
    const stages = [...new Set(reports.map((p) => p.stage))];
    expect(stages[0]).toBe("waiting");
    expect(stages.at(-1)).toBe("finishing");
    expect(reports.filter((p) => p.stage === "waiting").length).toBe(1);
    for (const [i, p] of reports.entries()) {
      if (i === 0) continue;
      expect(rank(p.stage)).toBeGreaterThanOrEqual(rank(reports[i - 1].stage));
      expect(p.frames_done).toBeGreaterThanOrEqual(reports[i - 1].frames_done);
      if (rank(p.stage) >= rank("extracting")) expect(p.frames_total).toBe(24);
    }
    // Nothing after the end.
    const count = edge.progress.length;
    await sleep(1200);
    expect(edge.progress.length).toBe(count);
  });

  it("a refused report stops the reports, not the job; a demo reports nothing", async () => {
    const video = await makeTestVideo({ durationSeconds: 3 });
    // Held at its source past the first report (none goes in an attempt's first 0.75 s).
    const gated = gatedOpener(video);
    await startServer(gated.openSource);
    edge.progressStatus = 409;
    try {
      const job = "9e0e0000-0000-4000-8000-0000000000b1";
      const jobEnd = endOf(job);
      await accept(
        request({
          job_id: job,
          attempt_id: "9e0e0000-0000-4000-8000-0000000000b2",
          lease_seconds: 30,
        }),
      );
      const reports = () => edge.progress.filter((p) => p.jobId === job);
      await vi.waitFor(() => expect(reports()).toHaveLength(1), { timeout: 5000, interval: 50 });
      // Two more ticks' time: refused once, it reports nothing more, on the timer or at the end.
      await sleep(1600);
      gated.release();
      expect(await jobEnd).toMatchObject({ status: "completed", delivery: "posted" });
      expect(reports()).toHaveLength(1);
    } finally {
      edge.progressStatus = 200;
    }
    gated.release();
    const demo = "9e0e0000-0000-4000-8000-0000000000c1";
    const { end } = await run(
      request({
        job_id: demo,
        kind: "demo",
        attempt_id: "9e0e0000-0000-4000-8000-0000000000c2",
        lease_seconds: 30,
      }),
    );
    expect(end.delivery).toBe("posted");
    expect(edge.progress.filter((p) => p.jobId === demo)).toHaveLength(0);
  });
});

describe("GET /healthz", () => {
  it("answers 200", async () => {
    await startServer(localFile("/nonexistent"));
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true });
  });
});
