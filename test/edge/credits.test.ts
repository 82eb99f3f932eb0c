// Issue 17.2 and 13.5: a job the account can afford is never refused at creation; what the
// probe finds out is settled atomically with the result; a job that costs more than the
// account holds ends failed with InsufficientBalance, uncharged; and the ledger always sums
// to the balance.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { ExtractRequest } from "../../schema/messages.ts";
import { type ApiResponse, api, balanceOf, createAccount } from "./support/api.ts";
import { expectLedgerSumsToBalance, setPlanCredits } from "./support/credits.ts";
import { setExtractor, setOutbound } from "./support/fake-extractor.ts";
import { internal, postResult, runFakeExtraction, uploadAttempt } from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";

async function waitForJob(id: string, auth: Record<string, string>, statuses: string[]) {
  let job: any;
  await vi.waitFor(
    async () => {
      job = (await api("GET", `/v1/jobs/${id}`, { headers: auth })).body;
      expect(statuses).toContain(job.status);
    },
    { timeout: 15_000, interval: 100 },
  );
  return job;
}

/** An account holding 5 plan credits, and the webhook bodies its jobs send. */
async function accountWithFiveCreditsAndHooks() {
  const account = await createAccount();
  await setPlanCredits(account.accountId, 5);
  const hooks: any[] = [];
  setOutbound(async (request) => {
    hooks.push(JSON.parse(await request.text()));
    return new Response("ok");
  });
  return { account, hooks };
}

describe("credits settled after the probe", { timeout: 30_000 }, () => {
  it("gives a free account with 10 credits a job on a 20-second clip without end, and charges 1", async () => {
    const account = await createAccount();
    await setPlanCredits(account.accountId, 10);
    setExtractor(async (request) => {
      await runFakeExtraction(request, { framesOk: 2, processedSeconds: 20, durationSeconds: 20 });
      return Response.json({ status: "completed" });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 2 },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const job = await waitForJob(created.body.id, account.auth, ["completed"]);
    expect(job.credits_charged).toBe(1);
    expect(await balanceOf(account.accountId)).toEqual({ plan: 9, pack: 0, reserved: 0 });
    await expectLedgerSumsToBalance(account.accountId);
  });

  it("ends a job that costs more than the account holds failed with InsufficientBalance, uncharged", async () => {
    const { account, hooks } = await accountWithFiveCreditsAndHooks();
    let attempt = "";
    setExtractor(async (request) => {
      // Ten minutes of video, every 2 s: 300 frames over 10 started minutes = 10 credits.
      attempt = (await runFakeExtraction(request, { framesOk: 300, processedSeconds: 600 }))
        .attempt_id;
      return Response.json({ status: "completed" });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, every: 2, webhook_url: "https://hooks.example.com/stills" },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const job = await waitForJob(created.body.id, account.auth, ["completed", "failed"]);
    expect(job).toMatchObject({
      status: "failed",
      credits_charged: 0,
      frames: [],
      zip_url: null,
      error: { name: "InsufficientBalance" },
    });
    expect(job.error.message).toContain("10 credits");
    expect(job.notice).toBe(job.error.userMessage);
    expect(await balanceOf(account.accountId)).toEqual({ plan: 5, pack: 0, reserved: 0 });
    await expectLedgerSumsToBalance(account.accountId);
    // Nothing of it is delivered: its files are gone and the webhook says failed.
    const left = await env.FILES.list({ prefix: `job/${job.id}/${attempt}/` });
    expect(left.objects).toEqual([]);
    await vi.waitFor(() => expect(hooks).toHaveLength(1), { timeout: 10_000 });
    expect(hooks[0]).toMatchObject({ type: "job.failed", data: { status: "failed" } });
  });

  it("stops a job as soon as its probed span costs more than the account can pay, uncharged", async () => {
    const { account, hooks } = await accountWithFiveCreditsAndHooks();
    const requests: ExtractRequest[] = [];
    // The attempt's side runs in the test (see lifecycle.lease.test.ts): it takes the job.
    setExtractor((request) => {
      requests.push(request);
      return Response.json({ accepted: true, attempt_id: request.attempt_id }, { status: 202 });
    });
    const renew = (request: ExtractRequest, fields: Record<string, unknown>) =>
      internal(
        `/internal/jobs/${request.kind}/${request.job_id}/lease`,
        { method: "POST", body: JSON.stringify({ attempt_id: request.attempt_id, ...fields }) },
        request.callback.token,
      );
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, every: 2, webhook_url: "https://hooks.example.com/stills" },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    const [request] = requests;
    expect(await balanceOf(account.accountId)).toEqual({ plan: 5, pack: 0, reserved: 1 });

    // Four minutes cost at least 4: hold 1 + 4 free cover it, so the attempt goes on.
    const covered = await renew(request, { processed_seconds: 240 });
    expect(covered.status).toBe(200);
    expect(
      (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth })).body.status,
    ).toBe("processing");

    // Ten minutes cost at least 10: the job ends now, and the attempt is told to stop.
    const stopped = await renew(request, { processed_seconds: 600 });
    expect(stopped.status).toBe(409);
    const job = await waitForJob(created.body.id, account.auth, ["failed"]);
    expect(job).toMatchObject({
      status: "failed",
      credits_charged: 0,
      frames: [],
      error: { name: "InsufficientBalance" },
    });
    expect(job.error.message).toContain("at least 10 credits");
    expect(await balanceOf(account.accountId)).toEqual({ plan: 5, pack: 0, reserved: 0 });
    await expectLedgerSumsToBalance(account.accountId);
    await vi.waitFor(() => expect(hooks).toHaveLength(1), { timeout: 10_000 });
    expect(hooks[0]).toMatchObject({ type: "job.failed", data: { status: "failed" } });
    // The attempt's later renewals and its uploads find the job settled, and nothing changes.
    expect((await renew(request, {})).status).toBe(409);
    await expect(
      runFakeExtraction(request, { framesOk: 300, processedSeconds: 600 }),
    ).rejects.toThrow(/409/);
    expect(
      (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth })).body,
    ).toMatchObject({ status: "failed", credits_charged: 0 });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 5, pack: 0, reserved: 0 });
  });

  it("never stops a job charged per frame on its span (its hold covers its first frame)", async () => {
    const account = await createAccount();
    await setPlanCredits(account.accountId, 5);
    const requests: ExtractRequest[] = [];
    setExtractor((request) => {
      requests.push(request);
      return Response.json({ accepted: true, attempt_id: request.attempt_id }, { status: 202 });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, timestamps: [1, 2, 3] },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    const [request] = requests;
    const renewed = await internal(
      `/internal/jobs/job/${request.job_id}/lease`,
      {
        method: "POST",
        body: JSON.stringify({ attempt_id: request.attempt_id, processed_seconds: 36_000 }),
      },
      request.callback.token,
    );
    expect(renewed.status).toBe(200);
    // A span that is not a number of seconds is refused as a malformed renewal.
    const malformed = await internal(
      `/internal/jobs/job/${request.job_id}/lease`,
      {
        method: "POST",
        body: JSON.stringify({ attempt_id: request.attempt_id, processed_seconds: -1 }),
      },
      request.callback.token,
    );
    expect(malformed.status).toBe(400);
  });

  it("lets two jobs settling at once never spend the same credits", async () => {
    const account = await createAccount();
    await setPlanCredits(account.accountId, 10);
    const requests: ExtractRequest[] = [];
    setExtractor((request) => {
      requests.push(request);
      return Response.json({ status: "completed" });
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await api("POST", "/v1/jobs", {
        body: { url: VIDEO, every: 2 },
        headers: account.auth,
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    expect((await balanceOf(account.accountId))?.reserved).toBe(2);
    await vi.waitFor(() => expect(requests).toHaveLength(2), { timeout: 10_000 });
    // Each costs 6 (6 started minutes): only one fits in 10.
    const results = await Promise.all(
      requests.map((r) => uploadAttempt(r, { framesOk: 180, processedSeconds: 360 })),
    );
    await Promise.all(results.map((result) => postResult(result)));
    const jobs = await Promise.all(
      ids.map((id) => waitForJob(id, account.auth, ["completed", "failed"])),
    );
    expect(jobs.map((j) => j.status).sort()).toEqual(["completed", "failed"]);
    expect(jobs.map((j) => j.credits_charged).sort()).toEqual([0, 6]);
    expect(jobs.find((j) => j.status === "failed").error.name).toBe("InsufficientBalance");
    expect(await balanceOf(account.accountId)).toEqual({ plan: 4, pack: 0, reserved: 0 });
    await expectLedgerSumsToBalance(account.accountId);
  });
});

describe("Races", { timeout: 120_000 }, () => {
  it("starts exactly the affordable ones of 100 concurrent creations, and the ledger sums to the balance", async () => {
    const account = await createAccount({ plan: "scale" });
    await setPlanCredits(account.accountId, 60);
    // Ten timestamps cost exactly 1 credit. The scale plan runs 25 jobs at once; this race is
    // about credits, so the active-jobs limit is lifted for it (plans are module constants).
    const { PLANS } = await import("../../schema/plans.ts");
    const limits = PLANS.scale.limits as { max_active_jobs: number };
    const active = limits.max_active_jobs;
    limits.max_active_jobs = 1000;
    let answers: ApiResponse[];
    try {
      answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          api("POST", "/v1/jobs", {
            body: { url: VIDEO, timestamps: [...Array(10).keys()] },
            headers: account.auth,
          }),
        ),
      );
    } finally {
      limits.max_active_jobs = active;
    }
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(60);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    for (const refused of answers.filter((r) => r.status === 402)) {
      expect(refused.body.data.name).toBe("InsufficientBalance");
    }
    expect(await balanceOf(account.accountId)).toEqual({ plan: 60, pack: 0, reserved: 60 });
    await expectLedgerSumsToBalance(account.accountId);

    // All 60 finish at once, each delivering its 10 frames: exactly the balance is spent.
    const started = answers.filter((r) => r.status === 201).map((r) => r.body.id as string);
    const results = await Promise.all(
      started.map((id) =>
        uploadAttempt(
          {
            job_id: id,
            kind: "job",
            options: {
              mode: "timestamps",
              timestamps: [],
              format: "jpg",
              resolution: 720,
              output: "urls",
            },
          } as unknown as ExtractRequest,
          { framesOk: 10, processedSeconds: 10 },
        ),
      ),
    );
    await Promise.all(results.map((result) => postResult(result)));
    await vi.waitFor(
      async () => {
        const settled = await env.DB.prepare(
          "SELECT count(*) AS n FROM jobs WHERE account_id = ? AND status = 'completed'",
        )
          .bind(account.accountId)
          .first<{ n: number }>();
        expect(settled?.n).toBe(60);
      },
      { timeout: 60_000, interval: 250 },
    );
    expect(await balanceOf(account.accountId)).toEqual({ plan: 0, pack: 0, reserved: 0 });
    await expectLedgerSumsToBalance(account.accountId);
  });
});
