import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { api, balanceOf, createAccount } from "./support/api.ts";
import { extractorCalls } from "./support/fake-extractor.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";

describe("POST /v1/jobs", () => {
  it("records the job in D1, hands it to the extractor at once as an attempt, and queues its backstop", async () => {
    const account = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", {
      body: {
        url: VIDEO,
        every: 2,
        start: 1,
        end: 61,
        format: "png",
        resolution: "720",
        max_width: 640,
      },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    // The job may already be on its way to the extractor when the answer is read back.
    expect(["queued", "processing"]).toContain(res.body.status);
    expect(res.body).toMatchObject({
      object: "job",
      url: VIDEO,
      platform: "direct",
      options: {
        mode: "interval",
        every: 2,
        start: 1,
        end: 61,
        format: "png",
        resolution: 720,
        max_width: 640,
        output: "urls",
      },
      frames: [],
      frames_failed: 0,
      credits_charged: null,
      requested_resolution: 720,
      zip_url: null,
      error: null,
    });
    await vi.waitFor(() => expect(extractorCalls.map((c) => c.job_id)).toContain(res.body.id), {
      timeout: 5000,
    });
    const call = extractorCalls.find((c) => c.job_id === res.body.id);
    expect(call).toMatchObject({
      kind: "job",
      url: VIDEO,
      platform: "direct",
      max_video_seconds: 3600,
      max_frames: 1000,
      lease_seconds: 30,
    });
    // A token for this attempt only, never the shared secret.
    expect(call?.attempt_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(call?.callback.token).toMatch(/^[A-Za-z0-9_-]{43}\.\d+$/);
    expect(call?.callback.token).not.toContain(env.INTERNAL_TOKEN);
    // No extractor answers in this test (503 busy): the attempt is given back, unspent.
    await vi.waitFor(
      async () => {
        const row = await env.DB.prepare(
          "SELECT account_id, status, attempt_id, attempts FROM jobs WHERE id = ?",
        )
          .bind(res.body.id)
          .first();
        expect(row).toEqual({
          account_id: account.accountId,
          status: "queued",
          attempt_id: call?.attempt_id,
          attempts: 0,
        });
      },
      { timeout: 5000, interval: 50 },
    );
  });

  it("detects the platform of a YouTube link", async () => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", {
      body: { url: "https://youtu.be/dQw4w9WgXcQ", count: 3 },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    expect(res.body.platform).toBe("youtube");
  });

  it("defaults a free account's resolution to its plan maximum", async () => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 3 },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    expect(res.body.options.resolution).toBe(720);
  });

  it("refuses a resolution above the plan with ResolutionNotAllowed", async () => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, resolution: "1080" },
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("ResolutionNotAllowed");
    expect((await balanceOf(account.accountId))?.reserved).toBe(0);
  });

  it.each([
    ["count", { count: 301 }],
    ["timestamps", { timestamps: Array.from({ length: 301 }, (_, i) => i) }],
    ["interval with an end", { every: 0.5, end: 151 }],
  ])("refuses more frames than the plan allows (%s) with TooManyFrames", async (_label, extra) => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, ...extra },
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("TooManyFrames");
    expect(res.body.message).toContain("300");
  });

  it("refuses a range longer than the plan processes with VideoTooLong", async () => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, every: 60, end: 16 * 60 },
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("VideoTooLong");
  });

  it("refuses a job beyond the plan's active jobs with 429 and Retry-After", async () => {
    const account = await createAccount();
    for (let i = 0; i < 2; i++) {
      expect(
        (await api("POST", "/v1/jobs", { body: { url: VIDEO, count: 1 }, headers: account.auth }))
          .status,
      ).toBe(201);
    }
    const res = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1 },
      headers: account.auth,
    });
    expect(res.status).toBe(429);
    expect(res.body.data.name).toBe("RateLimited");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("holds credits at creation: the most the job can cost", async () => {
    const account = await createAccount({ plan: "starter" });
    // 12 timestamps cost exactly ceil(12 / 10) = 2 credits.
    const exact = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, timestamps: [...Array(12).keys()] },
      headers: account.auth,
    });
    expect(exact.status).toBe(201);
    expect((await balanceOf(account.accountId))?.reserved).toBe(2);
    // 150 frames over a 2-minute range: 2 minutes, 200 frames included → 2 credits.
    const ranged = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 150, end: 120 },
      headers: account.auth,
    });
    expect(ranged.status).toBe(201);
    expect((await balanceOf(account.accountId))?.reserved).toBe(4);
    const ledger = await env.DB.prepare(
      "SELECT id, reserved_delta FROM credit_ledger WHERE account_id = ? AND kind = 'reserve' ORDER BY id",
    )
      .bind(account.accountId)
      .all();
    expect(ledger.results).toHaveLength(2);
  });

  it("holds at creation only what the job is sure to cost, so an affordable job is never refused", async () => {
    const account = await createAccount(); // free: 60 credits
    const held = async (body: Record<string, unknown>) => {
      const before = (await balanceOf(account.accountId))!.reserved;
      const res = await api("POST", "/v1/jobs", {
        body: { url: VIDEO, ...body },
        headers: account.auth,
      });
      expect(res.status).toBe(201);
      await env.DB.prepare("UPDATE jobs SET status = 'failed' WHERE id = ?")
        .bind(res.body.id)
        .run();
      return (await balanceOf(account.accountId))!.reserved - before;
    };
    // Without an end the length is unknown until the probe: at least one started minute.
    expect(await held({ every: 5 })).toBe(1);
    expect(await held({ count: 2 })).toBe(1);
    // Count mode knows its frames: 250 frames are at least 1 minute + 2 × 100 extra frames.
    expect(await held({ count: 250 })).toBe(3);
    expect(await held({ every: 5, end: 120 })).toBe(1);
    // Timestamps mode is exact: ceil(25 / 10).
    expect(await held({ timestamps: [...Array(25).keys()] })).toBe(3);
  });

  it("refuses a job the account cannot pay for with 402 InsufficientBalance", async () => {
    const account = await createAccount();
    await env.DB.prepare("UPDATE accounts SET plan_credits = 1 WHERE id = ?")
      .bind(account.accountId)
      .run();
    const res = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, timestamps: [...Array(20).keys()] },
      headers: account.auth,
    });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({
      name: "PaymentError",
      code: 402,
      className: "payment-error",
      data: { name: "InsufficientBalance" },
    });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1, pack: 0, reserved: 0 });
    const jobs = await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE account_id = ?")
      .bind(account.accountId)
      .first();
    expect(jobs).toEqual({ n: 0 });
  });

  it("creates one job for concurrent creates with the same Idempotency-Key", async () => {
    const account = await createAccount({ plan: "starter" });
    const headers = { ...account.auth, "idempotency-key": "same-click" };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        api("POST", "/v1/jobs", { body: { url: VIDEO, timestamps: [1] }, headers }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
    expect((await balanceOf(account.accountId))?.reserved).toBe(1);
  });

  it("lets no burst of concurrent creates pass the active-jobs or the credit limit", async () => {
    const free = await createAccount(); // 2 running jobs at once
    const burst = await Promise.all(
      Array.from({ length: 6 }, () =>
        api("POST", "/v1/jobs", { body: { url: VIDEO, count: 1 }, headers: free.auth }),
      ),
    );
    expect(burst.map((r) => r.status).sort()).toEqual([201, 201, 429, 429, 429, 429]);

    const poor = await createAccount({ plan: "starter" });
    await env.DB.prepare("UPDATE accounts SET plan_credits = 3 WHERE id = ?")
      .bind(poor.accountId)
      .run();
    // 20 timestamps hold 2 credits each: only one of these fits in 3.
    const racing = await Promise.all(
      Array.from({ length: 4 }, () =>
        api("POST", "/v1/jobs", {
          body: { url: VIDEO, timestamps: [...Array(20).keys()] },
          headers: poor.auth,
        }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 402, 402, 402]);
    expect(await balanceOf(poor.accountId)).toEqual({ plan: 3, pack: 0, reserved: 2 });
  });

  it("spends nothing twice for a retried create with the same Idempotency-Key", async () => {
    const account = await createAccount({ plan: "starter" });
    const body = { url: VIDEO, timestamps: [1, 2, 3] };
    const headers = { ...account.auth, "idempotency-key": "create-42" };
    const first = await api("POST", "/v1/jobs", { body, headers });
    const second = await api("POST", "/v1/jobs", { body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    expect((await balanceOf(account.accountId))?.reserved).toBe(1);
    const changed = await api("POST", "/v1/jobs", { body: { ...body, timestamps: [9] }, headers });
    expect(changed.status).toBe(400);
    expect(changed.body.message).toContain("Idempotency-Key");
  });
});

describe("GET /v1/jobs", () => {
  it("lists the caller's jobs newest first, paged, filtered by status, without file URLs", async () => {
    const account = await createAccount({ plan: "pro" });
    const other = await createAccount({ plan: "pro" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (
          await api("POST", "/v1/jobs", {
            body: { url: VIDEO, count: i + 1 },
            headers: account.auth,
          })
        ).body.id,
      );
    }
    await api("POST", "/v1/jobs", { body: { url: VIDEO, count: 1 }, headers: other.auth });
    await env.DB.prepare("UPDATE jobs SET status = 'failed' WHERE id = ?").bind(ids[0]).run();

    const all = await api("GET", "/v1/jobs", { headers: account.auth });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 3, limit: 20, skip: 0 });
    expect(all.body.data.map((j: { id: string }) => j.id)).toEqual([...ids].reverse());

    const page = await api("GET", "/v1/jobs?limit=1&skip=1", { headers: account.auth });
    expect(page.body).toMatchObject({ total: 3, limit: 1, skip: 1 });
    expect(page.body.data.map((j: { id: string }) => j.id)).toEqual([ids[1]]);

    const failed = await api("GET", "/v1/jobs?status=failed", { headers: account.auth });
    expect(failed.body.total).toBe(1);
    expect(failed.body.data[0].id).toBe(ids[0]);
    for (const job of all.body.data) {
      expect(job.zip_url).toBeNull();
      expect(job.frames).toEqual([]);
    }
  });
});

describe("GET /v1/jobs/{id}", () => {
  it("returns the caller's job and answers 404 JobNotFound for anyone else's", async () => {
    const owner = await createAccount();
    const stranger = await createAccount();
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 2 },
      headers: owner.auth,
    });
    const mine = await api("GET", `/v1/jobs/${created.body.id}`, { headers: owner.auth });
    expect(mine.status).toBe(200);
    expect(mine.body.id).toBe(created.body.id);
    const theirs = await api("GET", `/v1/jobs/${created.body.id}`, { headers: stranger.auth });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({
      name: "NotFound",
      code: 404,
      data: { name: "JobNotFound" },
    });
    const missing = await api("GET", `/v1/jobs/${crypto.randomUUID()}`, { headers: owner.auth });
    expect(missing.status).toBe(404);
  });
});
