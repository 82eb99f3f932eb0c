// Leases in real time, on the local queue: with a 2-second lease, a job that runs for several
// leases while renewing is never handed to a second attempt, and one whose extractor stops
// renewing (hung) is taken over by a new attempt, finishes once and is charged once.
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ExtractRequest } from "../../schema/messages.ts";
import { api, balanceOf, createAccount } from "./support/api.ts";
import { extractorCalls, setExtractor } from "./support/fake-extractor.ts";
import { internal, runFakeExtraction } from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";
const LEASE_SECONDS = 2;
const settings = env as unknown as Record<string, string | undefined>;
let previous: string | undefined;

beforeAll(() => {
  previous = settings.JOB_LEASE_SECONDS;
  settings.JOB_LEASE_SECONDS = String(LEASE_SECONDS);
});
afterAll(() => {
  settings.JOB_LEASE_SECONDS = previous;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function renew(request: ExtractRequest) {
  return internal(
    `/internal/jobs/${request.kind}/${request.job_id}/lease`,
    { method: "POST", body: JSON.stringify({ attempt_id: request.attempt_id }) },
    request.callback.token,
  );
}

async function settledJob(id: string, auth: Record<string, string>) {
  let job: any;
  await vi.waitFor(
    async () => {
      job = (await api("GET", `/v1/jobs/${id}`, { headers: auth })).body;
      expect(job.status).toBe("completed");
    },
    { timeout: 30_000, interval: 200 },
  );
  return job;
}

async function charges(jobId: string) {
  return env.DB.prepare(
    "SELECT count(*) AS n FROM credit_ledger WHERE job_id = ? AND kind = 'charge'",
  )
    .bind(jobId)
    .first<{ n: number }>();
}

describe("with a 2-second lease", { timeout: 60_000 }, () => {
  it("a job that runs for several leases while renewing is never redispatched", async () => {
    const account = await createAccount({ plan: "starter" });
    const requests: ExtractRequest[] = [];
    // The extractor's side runs in this test (a fetch begun inside the worker's own dispatch
    // would not outlive it): it takes the job, then renews and finishes below.
    setExtractor((request) => {
      requests.push(request);
      return Response.json({ accepted: true, attempt_id: request.attempt_id }, { status: 202 });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 2 },
      headers: account.auth,
    });
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    const [request] = requests;
    expect(request.lease_seconds).toBe(LEASE_SECONDS);
    // A slow job: renews every lease/3 for four leases, past several backstop looks.
    const renewals: number[] = [];
    for (let i = 0; i < 12; i++) {
      await sleep((LEASE_SECONDS * 1000) / 3);
      renewals.push((await renew(request)).status);
    }
    await runFakeExtraction(request, { framesOk: 2 });
    const job = await settledJob(created.body.id, account.auth);
    expect(renewals).toEqual(Array(12).fill(200));
    expect(requests).toHaveLength(1);
    expect(extractorCalls.filter((c) => c.job_id === job.id)).toHaveLength(1);
    const row = await env.DB.prepare("SELECT attempts, attempt_id FROM jobs WHERE id = ?")
      .bind(job.id)
      .first();
    expect(row).toEqual({ attempts: 1, attempt_id: request.attempt_id });
    expect(await charges(job.id)).toEqual({ n: 1 });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1498, pack: 0, reserved: 0 });
  });

  it("a hung extractor that stops renewing loses the job to a new attempt; it completes once", async () => {
    const account = await createAccount({ plan: "starter" });
    const requests: ExtractRequest[] = [];
    setExtractor((request) => {
      requests.push(request);
      return Response.json({ accepted: true, attempt_id: request.attempt_id }, { status: 202 });
    });
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 2 },
      headers: account.auth,
    });
    // The first attempt hangs: accepted, then silence. The backstop hands the job to a second.
    await vi.waitFor(() => expect(requests.length).toBeGreaterThanOrEqual(2), {
      timeout: 30_000,
      interval: 100,
    });
    await runFakeExtraction(requests[1], { framesOk: 2 });
    const job = await settledJob(created.body.id, account.auth);
    const [hung, taken] = requests;
    expect(requests).toHaveLength(2);
    expect(taken.attempt_id).not.toBe(hung.attempt_id);
    expect(job.frames[0].url).toContain(taken.attempt_id);
    // The hung attempt wakes up: its lease is no longer the job's, so it is told to stop.
    expect((await renew(hung)).status).toBe(409);
    expect(await charges(job.id)).toEqual({ n: 1 });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1498, pack: 0, reserved: 0 });
  });
});
