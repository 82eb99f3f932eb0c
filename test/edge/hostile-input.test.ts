// Issue 13's edge points: nothing a client or a faulty extractor sends outgrows its limits,
// turns into Infinity, charges more than a job can cost, or reaches an unhandled exception.
import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../edge/index.ts";
import { readAttemptState } from "../../edge/jobs/lifecycle.ts";
import { ipSubject } from "../../edge/middleware/rate-limit.ts";
import type { ExtractRequest, JobMessage } from "../../schema/messages.ts";
import { detectSource } from "../../schema/platform.ts";
import { api, balanceOf, createAccount, ORIGIN } from "./support/api.ts";
import { extractorCalls, setExtractor } from "./support/fake-extractor.ts";
import { internal, postResult, uploadAttempt } from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";

/**
 * A job of a fresh account, dispatched to the stand-in extractor, and the request it was sent:
 * what a faulty extractor posts below comes from the job's current attempt.
 */
async function runningJob(body: Record<string, unknown>, plan: "free" | "starter" = "starter") {
  const account = await createAccount({ plan });
  setExtractor(() => Response.json({ accepted: true }, { status: 202 }));
  const created = await api("POST", "/v1/jobs", {
    body: { url: VIDEO, ...body },
    headers: account.auth,
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  // The dispatch runs after the response (waitUntil): polled, as it needs the isolate's turns.
  let request: ExtractRequest | undefined;
  await vi.waitFor(
    async () => {
      request = extractorCalls.find((call) => call.job_id === id);
      expect(request).toBeDefined();
      expect((await readAttemptState(env, { kind: "job", id }))?.status).toBe("processing");
    },
    { timeout: 5000, interval: 50 },
  );
  return { account, id, request: request as ExtractRequest };
}

describe("request size", () => {
  it.each([
    ["url", { url: `${VIDEO}?${"a".repeat(2100)}` }, "InvalidUrl"],
    [
      "webhook_url",
      { url: VIDEO, webhook_url: `https://hooks.example.com/${"a".repeat(2100)}` },
      "InvalidRequest",
    ],
  ])("refuses a %s longer than 2048 characters", async (field, body, name) => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", { body, headers: account.auth });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe(name);
    expect(res.body.message).toContain(field);
  });

  it("follows one level of embed nesting and refuses a second", () => {
    const watch = "https://www.facebook.com/watch/?v=1234567890";
    const once = `https://www.facebook.com/plugins/video.php?href=${encodeURIComponent(watch)}`;
    const twice = `https://www.facebook.com/plugins/video.php?href=${encodeURIComponent(once)}`;
    expect(detectSource(once)).toEqual({ ok: true, platform: "facebook", url: watch });
    expect(detectSource(twice)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("embed inside an embed"),
    });
  });

  it("refuses 6,000 levels of nesting at once, by length, without parsing them", () => {
    let link = "https://www.facebook.com/watch/?v=1";
    for (let i = 0; i < 6000 && link.length < 1_000_000; i++) {
      link = `https://www.facebook.com/plugins/video.php?href=${encodeURIComponent(link)}`;
    }
    expect(detectSource(link)).toEqual({
      ok: false,
      reason: "the link is longer than 2048 characters",
    });
  });
});

describe("numbers stay finite", () => {
  it.each([
    ["start", { start: 1.8e302 }],
    ["end", { end: 1.8e302 }],
    ["timestamps", { timestamps: [1, 1.8e302] }],
    ["every", { every: 1e308 }],
    ["count", { count: 1e20 }],
    ["max_width", { max_width: 1e12 }],
  ])("refuses a huge %s with 400 naming it", async (field, extra) => {
    const account = await createAccount({ plan: "scale" });
    const res = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, ...extra },
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
    expect(res.body.message).toContain(field);
  });

  it("refuses a result with a number JSON cannot carry, and fails the job now instead of running it again", async () => {
    const { account, id, request } = await runningJob({ count: 3 });
    const result = await uploadAttempt(request, { framesOk: 3 });
    const text = JSON.stringify(result).replace('"timestamp":0.5', '"timestamp":1e400');
    expect(text).toContain("1e400");
    const posted = await internal("/internal/results", { method: "POST", body: text });
    expect(posted.status).toBe(400);
    expect(((await posted.json()) as { error: string }).error).toContain("frames.0.timestamp");
    const job = (await api("GET", `/v1/jobs/${id}`, { headers: account.auth })).body;
    expect(job).toMatchObject({
      status: "failed",
      credits_charged: 0,
      error: { name: "ExtractionFailed" },
    });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1500, pack: 0, reserved: 0 });
    // The job's message delivered again does not reach the extractor.
    const calls = extractorCalls.length;
    const ack = vi.fn();
    const batch = {
      queue: "stills-jobs",
      messages: [
        {
          id: "m",
          timestamp: new Date(),
          attempts: 2,
          body: { kind: "job", id } satisfies JobMessage,
          ack,
          retry: vi.fn(),
        },
      ],
    } as unknown as MessageBatch<JobMessage>;
    await worker.queue(batch, env, createExecutionContext());
    expect(ack).toHaveBeenCalled();
    expect(extractorCalls.length).toBe(calls);
  });
});

describe("a result's job id", () => {
  it("is one of the edge's UUIDs, or the result is refused as not a result", async () => {
    const { request } = await runningJob({ count: 3 });
    const result = await uploadAttempt(request, { framesOk: 3 });
    const named = { ...result, job_id: "job-1", frames: [], zip: null, captions: null };
    const posted = await internal("/internal/results", {
      method: "POST",
      body: JSON.stringify(named),
    });
    expect(posted.status).toBe(400);
    expect(((await posted.json()) as { error: string }).error).toBe(
      "not an extraction result: job_id: job_id must be a job's UUID",
    );
  });
});

describe("settlement never charges more than the job can cost", () => {
  it("refuses 3,000 ok frames with repeated indexes for a job of 6, and charges nothing", async () => {
    const { account, id, request } = await runningJob({ count: 6 });
    const result = await uploadAttempt(request, { framesOk: 6 });
    const padded = {
      ...result,
      frames: Array.from({ length: 3000 }, (_, i) => result.frames[i % 6]),
    };
    const posted = await internal("/internal/results", {
      method: "POST",
      body: JSON.stringify(padded),
    });
    expect(posted.status).toBe(400);
    expect(((await posted.json()) as { error: string }).error).toContain("repeat");
    const job = (await api("GET", `/v1/jobs/${id}`, { headers: account.auth })).body;
    expect(job).toMatchObject({ status: "failed", credits_charged: 0, frames_count: null });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1500, pack: 0, reserved: 0 });
  });

  it("refuses more distinct frames than the job planned", async () => {
    const { id, request, account } = await runningJob({ count: 6 });
    const result = await uploadAttempt(request, { framesOk: 7 });
    const posted = await internal("/internal/results", {
      method: "POST",
      body: JSON.stringify(result),
    });
    expect(posted.status).toBe(400);
    expect(((await posted.json()) as { error: string }).error).toBe(
      "7 frames, but the job plans at most 6",
    );
    const job = (await api("GET", `/v1/jobs/${id}`, { headers: account.auth })).body;
    expect(job.status).toBe("failed");
  });

  it("counts frames_count from the frame rows it stored", async () => {
    const { id, request, account } = await runningJob({ timestamps: [1, 2, 3, 4] });
    await postResult(await uploadAttempt(request, { framesOk: 3, framesFailed: 1 }));
    let job: any;
    await vi.waitFor(
      async () => {
        job = (await api("GET", `/v1/jobs/${id}`, { headers: account.auth })).body;
        expect(job.status).toBe("completed");
      },
      { timeout: 10_000, interval: 100 },
    );
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM frames WHERE job_id = ?")
      .bind(id)
      .first();
    expect(rows).toEqual({ n: 4 });
    expect(job).toMatchObject({ frames_count: 4, frames_failed: 1, credits_charged: 1 });
    expect(job.frames).toHaveLength(4);
  });
});

describe("IPv6 clients are limited per /64", () => {
  it("maps addresses to the subject their limits count", () => {
    expect(ipSubject("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(ipSubject("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(ipSubject("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(ipSubject("203.0.113.9")).toBe("203.0.113.9");
  });

  it("shares one demo allowance between two addresses of one /64", async () => {
    const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:7`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await api("POST", "/v1/demo", {
        body: { url: VIDEO },
        ip: `${prefix}:${i}::${i + 1}`,
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    const neighbour = await api("POST", "/v1/demo", { body: { url: VIDEO }, ip: `${prefix}1::1` });
    expect(neighbour.status).toBe(201);
  });

  it("counts failed authentication of a whole /64 together", async () => {
    const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:9`;
    for (let i = 0; i < 60; i++) {
      const res = await api("GET", "/v1/usage", {
        ip: `${prefix}::${i + 1}`,
        headers: { "x-api-key": "guess" },
      });
      expect(res.status).toBe(401);
    }
    const limited = await api("GET", "/v1/usage", {
      ip: `${prefix}:abcd::1`,
      headers: { "x-api-key": "guess" },
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toMatch(/^\d+$/);
  });
});

describe("error paths answer 4xx, not 503", () => {
  it("/files/%ZZ is 400 and an internal key that is not valid encoding is 400", async () => {
    const res = await exports.default.fetch(`${ORIGIN}/files/%ZZ`);
    expect(res.status).toBe(400);
    const upload = await internal("/internal/files/job%2F%25ZZ.jpg", { method: "PUT", body: "x" });
    expect(upload.status).toBe(400);
  });

  it("a demo whose queue send fails is failed at once, not left for the 3-hour sweep", async () => {
    const url = `${VIDEO}?demo=${crypto.randomUUID()}`;
    const send = vi.spyOn(env.JOBS_QUEUE, "send").mockRejectedValueOnce(new Error("queue down"));
    try {
      const res = await api("POST", "/v1/demo", { body: { url } });
      expect(res.status).toBe(503);
      expect(res.body.data.name).toBe("ServiceUnavailable");
    } finally {
      send.mockRestore();
    }
    const row = await env.DB.prepare("SELECT status, error FROM demo_jobs WHERE url = ?")
      .bind(url)
      .first<{ status: string; error: string }>();
    expect(row?.status).toBe("failed");
    expect(JSON.parse(row!.error)).toMatchObject({ name: "ExtractionFailed" });
  });
});
