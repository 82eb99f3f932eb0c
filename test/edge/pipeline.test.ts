// The edge half of the pipeline, inside workerd: dispatch, uploads, the results queue,
// settlement once, credits, signed URLs, webhooks, expiry and dead letters.

import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { jobWaiter } from "../../edge/durable/job-waiter.ts";
import worker from "../../edge/index.ts";
import { forgetSettledJobs } from "../../edge/jobs/read.ts";
import { expireJobs } from "../../edge/maintenance.ts";
import { signWebhook } from "../../edge/webhooks.ts";
import type { ExtractResult, JobMessage } from "../../schema/messages.ts";
import { api, balanceOf, createAccount, ORIGIN } from "./support/api.ts";
import { extractorCalls, setExtractor, setOutbound } from "./support/fake-extractor.ts";
import {
  frameBytes,
  internal,
  postResult,
  runFakeExtraction,
  uploadAttempt,
} from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";

/** A one-message batch whose ack and retry are spies, to read the delay a consumer chose. */
function spiedBatch<T>(
  queue: string,
  message: { id: string; timestamp: Date; attempts: number; body: T },
) {
  const ack = vi.fn();
  const retry = vi.fn();
  const batch = {
    queue,
    messages: [{ ...message, ack, retry }],
    ackAll: vi.fn(),
    retryAll: vi.fn(),
  } as unknown as MessageBatch<T>;
  return { batch, ack, retry };
}

async function waitForStatus(path: string, auth: Record<string, string>, status: string) {
  let job: any;
  await vi.waitFor(
    async () => {
      job = (await api("GET", path, { headers: auth })).body;
      expect(job.status).toBe(status);
    },
    { timeout: 10_000, interval: 100 },
  );
  return job;
}

describe("a job end to end through the edge", { timeout: 30_000 }, () => {
  it("completes, charges the spec's credits once, and serves its frames by signed URL", async () => {
    const account = await createAccount({ plan: "starter" });
    const results: ExtractResult[] = [];
    setExtractor(async (request) => {
      results.push(
        await runFakeExtraction(request, { framesOk: 150, framesFailed: 2, processedSeconds: 61 }),
      );
      return Response.json({ status: "completed" });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, every: 0.4, end: 61 },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const job = await waitForStatus(`/v1/jobs/${created.body.id}`, account.auth, "completed");

    // 61 s → 2 started minutes, 200 frames included; 150 ok frames → 2 credits.
    expect(job).toMatchObject({
      credits_charged: 2,
      frames_count: 152,
      frames_failed: 2,
      width: 1280,
      height: 720,
      delivered_resolution: 720,
    });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1498, pack: 0, reserved: 0 });
    expect(Date.parse(job.expires_at) - Date.parse(job.completed_at)).toBe(7 * 86_400_000);
    expect(job.started_at).not.toBeNull();

    const frame = job.frames[0];
    expect(frame).toMatchObject({ index: 1, status: "ok", error: null });
    const download = await exports.default.fetch(frame.url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/jpeg");
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(
      frameBytes(job.id, results[0].attempt_id, 1),
    );
    expect(job.frames.at(-1)).toMatchObject({
      status: "error",
      url: null,
      error: "past the end of the video",
    });

    // The same result delivered again, straight to the consumer, changes nothing.
    const redelivery = spiedBatch("stills-results", {
      id: "r1",
      timestamp: new Date(),
      attempts: 2,
      body: {
        kind: "job",
        job_id: job.id,
        result_key: `job/${job.id}/${results[0].attempt_id}/result.json`,
      },
    });
    await worker.queue(redelivery.batch, env, createExecutionContext());
    expect(redelivery.ack).toHaveBeenCalled();
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1498, pack: 0, reserved: 0 });
    const ledger = await env.DB.prepare(
      "SELECT count(*) AS n FROM credit_ledger WHERE job_id = ? AND kind = 'charge'",
    )
      .bind(job.id)
      .first();
    expect(ledger).toEqual({ n: 1 });
  });

  it("answers 403 to a tampered or expired signature and once the job has expired", async () => {
    const account = await createAccount();
    setExtractor(async (request) => {
      await runFakeExtraction(request, { framesOk: 1 });
      return Response.json({ status: "completed" });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1 },
      headers: account.auth,
    });
    const job = await waitForStatus(`/v1/jobs/${created.body.id}`, account.auth, "completed");
    const url = new URL(job.frames[0].url);
    expect(url.origin).toBe(ORIGIN);

    const tampered = new URL(url);
    const signature = url.searchParams.get("signature")!;
    tampered.searchParams.set(
      "signature",
      `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`,
    );
    expect((await exports.default.fetch(tampered)).status).toBe(403);
    const longer = new URL(url);
    longer.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 86_400));
    expect((await exports.default.fetch(longer)).status).toBe(403);
    const otherFile = new URL(url.href.replace("frame-0001", "frame-0002"));
    expect((await exports.default.fetch(otherFile)).status).toBe(403);
    expect((await exports.default.fetch(url)).status).toBe(200);

    // Past the retention the cron run expires the job, deletes its files, and URLs stop.
    const expiredAt = Date.parse(job.expires_at) + 1000;
    await expireJobs(env, expiredAt);
    forgetSettledJobs();
    expect((await exports.default.fetch(url)).status).toBe(403);
    const listed = await env.FILES.list({ prefix: `job/${job.id}/` });
    expect(listed.objects).toHaveLength(0);
    const read = await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth });
    expect(read.body.status).toBe("expired");
    expect(read.body.frames[0].url).toBeNull();
  });

  it("fails a job cleanly, charges nothing and releases the hold", async () => {
    const account = await createAccount();
    setExtractor(async (request) => {
      await runFakeExtraction(request, {
        fail: { name: "PrivateContent", message: "HTTP 403 from origin", userMessage: "" },
      });
      return Response.json({ status: "failed" });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 2 },
      headers: account.auth,
    });
    const job = await waitForStatus(`/v1/jobs/${created.body.id}`, account.auth, "failed");
    expect(job.error).toMatchObject({ name: "PrivateContent", message: "HTTP 403 from origin" });
    expect(job.error.userMessage.length).toBeGreaterThan(0);
    expect(job.credits_charged).toBe(0);
    expect(await balanceOf(account.accountId)).toEqual({ plan: 60, pack: 0, reserved: 0 });
  });

  it("settles once when a second attempt finishes after the first, and deletes the loser's files", async () => {
    const account = await createAccount({ plan: "starter" });
    let request: Parameters<Parameters<typeof setExtractor>[0] & object>[0] | undefined;
    setExtractor((r) => {
      request = r;
      return Response.json({ status: "completed" });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, timestamps: [1, 2, 3] },
      headers: account.auth,
    });
    await vi.waitFor(() => expect(request?.job_id).toBe(created.body.id));
    // Both attempts upload while the job runs; the first result to arrive wins.
    const late = await uploadAttempt(request!, { framesOk: 3, attemptId: "attempt-b" });
    const first = await runFakeExtraction(request!, { framesOk: 3, attemptId: "attempt-a" });
    await waitForStatus(`/v1/jobs/${created.body.id}`, account.auth, "completed");
    await postResult(late);
    await vi.waitFor(
      async () => {
        const left = await env.FILES.list({ prefix: `job/${created.body.id}/attempt-b/` });
        expect(left.objects).toEqual([]);
      },
      { timeout: 10_000, interval: 200 },
    );
    const job = (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth })).body;
    expect(job.frames.map((f: any) => f.url.includes(first.attempt_id))).toEqual([
      true,
      true,
      true,
    ]);
    expect(job.credits_charged).toBe(1);
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1499, pack: 0, reserved: 0 });
  });
});

describe("the internal endpoints", () => {
  it("refuse calls without an attempt's token, and the shared secret itself", async () => {
    const key = `job/${crypto.randomUUID()}/a/frame-0001.jpg`;
    for (const headers of [
      {},
      { authorization: "Bearer wrong" },
      { authorization: `Bearer ${env.INTERNAL_TOKEN}` },
    ] as Record<string, string>[]) {
      const put = await exports.default.fetch(`${ORIGIN}/internal/files/${key}`, {
        method: "PUT",
        body: "x",
        headers,
      });
      expect(put.status).toBe(401);
      const post = await exports.default.fetch(`${ORIGIN}/internal/results`, {
        method: "POST",
        body: "{}",
        headers,
      });
      expect(post.status).toBe(401);
    }
  });

  it("refuse files for a job that does not exist or has finished", async () => {
    const missing = await internal(`/internal/files/job/${crypto.randomUUID()}/a/frame-0001.jpg`, {
      method: "PUT",
      body: "x",
    });
    expect(missing.status).toBe(404);
    const traversal = await internal(`/internal/files/job/..%2F..%2Fetc/a/frame-0001.jpg`, {
      method: "PUT",
      body: "x",
    });
    expect(traversal.status).toBe(400);
  });

  it("assemble a multipart ZIP upload in R2", async () => {
    const account = await createAccount();
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1, output: "zip" },
      headers: account.auth,
    });
    const key = `job/${created.body.id}/attempt-z/frames.zip`;
    const begun = await (await internal(`/internal/uploads/${key}`, { method: "POST" })).json<{
      upload_id: string;
    }>();
    const partOne = new Uint8Array(5 * 1024 * 1024).fill(7);
    const partTwo = new TextEncoder().encode("tail");
    const parts = [];
    for (const [n, body] of [
      [1, partOne],
      [2, partTwo],
    ] as const) {
      const res = await internal(
        `/internal/uploads/${key}?upload_id=${begun.upload_id}&part=${n}`,
        { method: "PUT", body },
      );
      parts.push(await res.json());
    }
    const done = await internal(`/internal/uploads/${key}/complete?upload_id=${begun.upload_id}`, {
      method: "POST",
      body: JSON.stringify({ parts }),
    });
    expect(await done.json()).toEqual({ key, bytes: partOne.length + partTwo.length });
    const object = await env.FILES.get(key);
    const bytes = new Uint8Array(await object!.arrayBuffer());
    expect(bytes[0]).toBe(7);
    expect(new TextDecoder().decode(bytes.slice(-4))).toBe("tail");
  });
});

describe("dispatch", () => {
  it("retries failed dispatches with growing delays in a new message, and fails the job from the dead-letter queue", async () => {
    const account = await createAccount();
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1 },
      headers: account.auth,
    });
    // The create route's own dispatch met a down extractor (503): the job is queued again.
    await vi.waitFor(
      async () => {
        const state = await env.DB.prepare("SELECT status FROM jobs WHERE id = ?")
          .bind(created.body.id)
          .first();
        expect(extractorCalls.map((c) => c.job_id)).toContain(created.body.id);
        expect(state).toEqual({ status: "queued" });
      },
      { timeout: 10_000, interval: 50 },
    );
    const sent = vi.spyOn(env.JOBS_QUEUE, "send");
    const message = {
      id: "m1",
      timestamp: new Date(),
      attempts: 1,
      body: { kind: "job", id: created.body.id, failures: 2 } satisfies JobMessage,
    };
    setExtractor(() => new Response("broken", { status: 500 }));
    const { batch, retry, ack } = spiedBatch("stills-jobs", message);
    await worker.queue(batch, env, createExecutionContext());
    expect(ack).toHaveBeenCalled();
    expect(retry).not.toHaveBeenCalled();
    // The third failure waits 5 s · 2² = 20 s, in a message that carries the count.
    expect(sent).toHaveBeenCalledWith(
      { kind: "job", id: created.body.id, failures: 3 },
      { delaySeconds: 20 },
    );
    sent.mockRestore();
    const row = await env.DB.prepare(
      "SELECT status, attempts, lease_expires_at FROM jobs WHERE id = ?",
    )
      .bind(created.body.id)
      .first();
    // The failed call spent an attempt and gave the job back to the queue.
    expect(row).toEqual({ status: "queued", attempts: 1, lease_expires_at: null });

    const dead = spiedBatch("stills-dead-letters", { ...message, id: "m2" });
    await worker.queue(dead.batch, env, createExecutionContext());
    expect(dead.ack).toHaveBeenCalled();
    const failed = (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth }))
      .body;
    expect(failed).toMatchObject({
      status: "failed",
      error: { name: "ExtractionFailed" },
      credits_charged: 0,
    });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 60, pack: 0, reserved: 0 });
  });
});

describe("wait=true", () => {
  it("is woken by the settlement and answers with the completed job", async () => {
    const account = await createAccount();
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      lines.push(String(line));
    });
    let waited = -1;
    setExtractor(async (request) => {
      // Settle only once the wait=true request is held on the job's JobWaiter.
      const waiter = jobWaiter(env, "job", request.job_id);
      await vi.waitFor(async () => expect(await waiter.waiting()).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      waited = await waiter.waiting();
      await runFakeExtraction(request, { framesOk: 1 });
      return Response.json({ accepted: true }, { status: 202 });
    });
    try {
      const created = await api("POST", "/v1/jobs", {
        body: { url: VIDEO, count: 1 },
        headers: account.auth,
      });
      const read = await api("GET", `/v1/jobs/${created.body.id}?wait=true`, {
        headers: account.auth,
      });
      expect(waited).toBe(1);
      expect(read.body.status).toBe("completed");
      expect(read.body.frames[0].url).toContain("/files/");
      const events = lines
        .map((l) => JSON.parse(l) as { event?: string; job?: string; woken?: number })
        .filter((e) => e.job === created.body.id)
        .map((e) => `${e.event}${e.woken ? `:${e.woken}` : ""}`);
      // Settled, then the one waiting request woken by it: no polling answered it.
      expect(events.indexOf("job.waiters_woken:1")).toBeGreaterThan(events.indexOf("job.settled"));
      expect(events.indexOf("job.settled")).toBeGreaterThan(-1);
    } finally {
      log.mockRestore();
    }
  }, 30_000);
});

describe("late dispatch outcomes", () => {
  it("never reopen a job its result has already settled", async () => {
    const account = await createAccount();
    setExtractor(async (request) => {
      await runFakeExtraction(request, { framesOk: 1 });
      // The result is settled, then the call fails anyway (a 502, a dropped connection).
      await vi.waitFor(
        async () => {
          const row = await env.DB.prepare("SELECT 1 AS settled FROM settlements WHERE job_id = ?")
            .bind(request.job_id)
            .first();
          expect(row).not.toBeNull();
        },
        { timeout: 10_000, interval: 100 },
      );
      return new Response("result post failed", { status: 502 });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1 },
      headers: account.auth,
    });
    await waitForStatus(`/v1/jobs/${created.body.id}`, account.auth, "completed");
    await new Promise((r) => setTimeout(r, 1000));
    const job = (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth })).body;
    expect(job.status).toBe("completed");
    // 100 s processed → 2 credits, charged once, nothing left held.
    expect(await balanceOf(account.accountId)).toEqual({ plan: 58, pack: 0, reserved: 0 });
  });

  it("a busy extractor puts the job back in a new message without spending a retry", async () => {
    const account = await createAccount();
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1 },
      headers: account.auth,
    });
    setExtractor(() => new Response("busy", { status: 503, headers: { "retry-after": "7" } }));
    const { batch, ack, retry } = spiedBatch("stills-jobs", {
      id: "b1",
      timestamp: new Date(),
      attempts: 1,
      body: { kind: "job", id: created.body.id } satisfies JobMessage,
    });
    await worker.queue(batch, env, createExecutionContext());
    expect(ack).toHaveBeenCalled();
    expect(retry).not.toHaveBeenCalled();
    const read = await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth });
    expect(read.body.status).toBe("queued");
  });
});

describe("webhooks", () => {
  it("delivers job.completed signed with the account's secret, without following redirects", async () => {
    const account = await createAccount();
    const received: { url: string; redirect: string; headers: Headers; body: string }[] = [];
    setOutbound(async (request) => {
      received.push({
        url: request.url,
        redirect: request.redirect,
        headers: request.headers,
        body: await request.text(),
      });
      return new Response("ok");
    });
    setExtractor(async (request) => {
      await runFakeExtraction(request, { framesOk: 2 });
      return Response.json({ status: "completed" });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 2, webhook_url: "https://hooks.example.com/stills" },
      headers: account.auth,
    });
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 10_000 });
    const hook = received[0];
    expect(hook.url).toBe("https://hooks.example.com/stills");
    expect(hook.redirect).toBe("manual");
    const body = hook.body;
    const id = hook.headers.get("webhook-id")!;
    const timestamp = Number(hook.headers.get("webhook-timestamp"));
    const secret = (await env.DB.prepare("SELECT webhook_secret FROM accounts WHERE id = ?")
      .bind(account.accountId)
      .first<{ webhook_secret: string }>())!.webhook_secret;
    expect(hook.headers.get("webhook-signature")).toBe(
      await signWebhook(secret, id, timestamp, body),
    );
    const payload = JSON.parse(body);
    expect(payload).toMatchObject({
      type: "job.completed",
      data: { id: created.body.id, status: "completed", object: "job" },
    });
    expect(payload.data.frames[0].url).toContain("/files/");
  });

  it("retries a failing receiver with growing delays and never follows its redirect", async () => {
    const account = await createAccount();
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1, webhook_url: "https://hooks.example.com/moved" },
      headers: account.auth,
    });
    const { batch, retry } = spiedBatch("stills-webhooks", {
      id: "w1",
      timestamp: new Date(),
      attempts: 2,
      body: { event_id: "msg_x", type: "job.completed", job_id: created.body.id },
    });
    let followed = false;
    setOutbound((request) => {
      if (request.url.includes("elsewhere")) followed = true;
      return new Response(null, {
        status: 302,
        headers: { location: "https://elsewhere.example.com/" },
      });
    });
    await worker.queue(batch, env, createExecutionContext());
    expect(followed).toBe(false);
    expect(retry).toHaveBeenCalledWith({ delaySeconds: 4 });
  });
});
