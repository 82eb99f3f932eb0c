// Issue 11: one module owns every status change of a job (edge/jobs/lifecycle.ts), and each
// transition happens only from the states its diagram allows. Also: the jobs-queue backstop
// and the cron find an attempt whose lease ran out, and a stale attempt's renewal is refused.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { keepJobGoing } from "../../edge/jobs/backstop.ts";
import {
  expire,
  type JobRef,
  MAX_ATTEMPTS,
  readAttemptState,
  releaseAttempt,
  renewLease,
  startAttempt,
  visibleStatus,
} from "../../edge/jobs/lifecycle.ts";
import { failUnsettled } from "../../edge/jobs/settlement.ts";
import { redispatchLostAttempts } from "../../edge/maintenance.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { api, balanceOf, createAccount } from "./support/api.ts";
import { extractorCalls, setExtractor } from "./support/fake-extractor.ts";
import { internal, runFakeExtraction, uploadAttempt } from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";

/** A job recorded through the API whose create-time dispatch met a down extractor: queued. */
async function queuedJob() {
  const account = await createAccount({ plan: "starter" });
  const created = await api("POST", "/v1/jobs", {
    body: { url: VIDEO, count: 2 },
    headers: account.auth,
  });
  expect(created.status).toBe(201);
  const job: JobRef = { kind: "job", id: created.body.id };
  await vi.waitFor(
    async () => {
      expect(extractorCalls.map((c) => c.job_id)).toContain(job.id);
      expect((await readAttemptState(env, job))?.status).toBe("queued");
    },
    { timeout: 5000, interval: 50 },
  );
  return { account, job };
}

async function ageLease(job: JobRef, msAgo = 1000) {
  await env.DB.prepare("UPDATE jobs SET lease_expires_at = ? WHERE id = ?")
    .bind(new Date(Date.now() - msAgo).toISOString(), job.id)
    .run();
}

describe("transitions", () => {
  it("start only from queued or a lapsed lease, and a new start replaces the attempt", async () => {
    const { job } = await queuedJob();
    expect(await startAttempt(env, job, "attempt-1", 30)).toBe(true);
    const started = await readAttemptState(env, job);
    expect(started).toMatchObject({ status: "processing", attemptId: "attempt-1", attempts: 1 });
    // While attempt-1's lease is live nobody else may start.
    expect(await startAttempt(env, job, "attempt-2", 30)).toBe(false);
    expect((await readAttemptState(env, job))?.attemptId).toBe("attempt-1");
    await ageLease(job);
    expect(await startAttempt(env, job, "attempt-2", 30)).toBe(true);
    expect(await readAttemptState(env, job)).toMatchObject({
      status: "processing",
      attemptId: "attempt-2",
      attempts: 2,
    });
  });

  it("renew and release only for the job's current attempt, and never once settled", async () => {
    const { job } = await queuedJob();
    await startAttempt(env, job, "attempt-1", 30);
    await ageLease(job);
    await startAttempt(env, job, "attempt-2", 30);
    expect(await renewLease(env, job, "attempt-1", 30)).toBe(false);
    expect(await releaseAttempt(env, job, "attempt-1", false)).toBe(false);
    expect(await renewLease(env, job, "attempt-2", 30)).toBe(true);
    expect(await releaseAttempt(env, job, "attempt-2", true)).toBe(true);
    // A busy answer gives its attempt back: only attempt-1 counts.
    expect(await readAttemptState(env, job)).toMatchObject({ status: "queued", attempts: 1 });
    // Queued: nothing to renew or release.
    expect(await renewLease(env, job, "attempt-2", 30)).toBe(false);
    expect(await releaseAttempt(env, job, "attempt-2", false)).toBe(false);

    await failUnsettled(env, job, "ExtractionFailed", "given up in a test");
    expect((await readAttemptState(env, job))?.status).toBe("failed");
    expect(await startAttempt(env, job, "attempt-3", 30)).toBe(false);
    expect(await renewLease(env, job, "attempt-2", 30)).toBe(false);
    // failed never expires (its files are cleaned up, its status stays).
    expect(await expire(env, job)).toBe(false);
    expect((await readAttemptState(env, job))?.status).toBe("failed");
  });

  it("settle only once: a completed job is never failed, restarted or reopened", async () => {
    const { account, job } = await queuedJob();
    let request: ExtractRequest | undefined;
    setExtractor((r) => {
      request = r;
      return Response.json({ accepted: true }, { status: 202 });
    });
    const next = await keepJobGoing(env, { kind: "job", id: job.id });
    expect(next?.delaySeconds).toBe(31);
    await vi.waitFor(() => expect(request?.job_id).toBe(job.id));
    await runFakeExtraction(request as ExtractRequest, { framesOk: 2 });
    expect((await readAttemptState(env, job))?.status).toBe("completed");

    await failUnsettled(env, job, "ExtractionFailed", "too late");
    expect(await startAttempt(env, job, "late", 30)).toBe(false);
    expect(await releaseAttempt(env, job, request?.attempt_id ?? "", false)).toBe(false);
    const read = (await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth })).body;
    expect(read).toMatchObject({ status: "completed", error: null, credits_charged: 2 });
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1498, pack: 0, reserved: 0 });
    // completed → expired, once.
    expect(await expire(env, job)).toBe(true);
    expect(await expire(env, job)).toBe(false);
    expect((await readAttemptState(env, job))?.status).toBe("expired");
  });

  it("stop starting a job that has used MAX_ATTEMPTS; the backstop then fails it", async () => {
    const { account, job } = await queuedJob();
    await env.DB.prepare("UPDATE jobs SET attempts = ? WHERE id = ?")
      .bind(MAX_ATTEMPTS, job.id)
      .run();
    expect(await startAttempt(env, job, "one-too-many", 30)).toBe(false);
    const calls = extractorCalls.length;
    expect(await keepJobGoing(env, { kind: "job", id: job.id })).toBeNull();
    expect(extractorCalls.length).toBe(calls);
    const read = (await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth })).body;
    expect(read).toMatchObject({ status: "failed", credits_charged: 0 });
    expect(read.error.message).toContain("repeated attempts");
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1500, pack: 0, reserved: 0 });
  });

  it("read a completed job past its expiry as expired before the cron marks it", () => {
    const past = new Date(Date.now() - 1000).toISOString();
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(visibleStatus({ status: "completed", expiresAt: past })).toBe("expired");
    expect(visibleStatus({ status: "completed", expiresAt: future })).toBe("completed");
    expect(visibleStatus({ status: "failed", expiresAt: past })).toBe("failed");
  });
});

describe("a lost attempt", () => {
  it("is found by the backstop once its lease runs out and redispatched as a new attempt, charged once", async () => {
    const { account, job } = await queuedJob();
    const requests: ExtractRequest[] = [];
    // The first extractor takes the job and dies (never renews, never posts).
    setExtractor((r) => {
      requests.push(r);
      return Response.json({ accepted: true }, { status: 202 });
    });
    expect((await keepJobGoing(env, { kind: "job", id: job.id }))?.delaySeconds).toBe(31);
    // While its lease is live the backstop only looks again later: no second attempt.
    expect((await keepJobGoing(env, { kind: "job", id: job.id }))?.delaySeconds).toBeGreaterThan(
      25,
    );
    expect(requests).toHaveLength(1);
    await ageLease(job);
    const second = new Promise<ExtractRequest>((resolve) =>
      setExtractor(async (r) => {
        requests.push(r);
        resolve(r);
        return Response.json({ accepted: true }, { status: 202 });
      }),
    );
    await keepJobGoing(env, { kind: "job", id: job.id });
    const retried = await second;
    expect(retried.attempt_id).not.toBe(requests[0].attempt_id);
    expect(retried.callback.token).not.toBe(requests[0].callback.token);

    // The dead attempt comes back to life: its renewal is refused, so it stops.
    const stale = await internal(
      `/internal/jobs/job/${job.id}/lease`,
      { method: "POST", body: JSON.stringify({ attempt_id: requests[0].attempt_id }) },
      requests[0].callback.token,
    );
    expect(stale.status).toBe(409);
    const current = await internal(
      `/internal/jobs/job/${job.id}/lease`,
      { method: "POST", body: JSON.stringify({ attempt_id: retried.attempt_id }) },
      retried.callback.token,
    );
    expect(current.status).toBe(200);

    await runFakeExtraction(retried, { framesOk: 2 });
    const read = (await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth })).body;
    expect(read).toMatchObject({ status: "completed", credits_charged: 2, frames_count: 2 });
    expect(read.frames[0].url).toContain(retried.attempt_id);
    expect(await balanceOf(account.accountId)).toEqual({ plan: 1498, pack: 0, reserved: 0 });
    const charges = await env.DB.prepare(
      "SELECT count(*) AS n FROM credit_ledger WHERE job_id = ? AND kind = 'charge'",
    )
      .bind(job.id)
      .first();
    expect(charges).toEqual({ n: 1 });
  });

  /** A queued job dispatched once to a stand-in extractor that records every request. */
  async function dispatchedJob() {
    const { account, job } = await queuedJob();
    const requests: ExtractRequest[] = [];
    setExtractor((r) => {
      requests.push(r);
      return Response.json({ accepted: true }, { status: 202 });
    });
    await keepJobGoing(env, { kind: "job", id: job.id });
    return { account, job, requests };
  }

  /** The attempt, woken, reports the timeout its hang caused. */
  async function postHangFailure(attempt: ExtractRequest) {
    const failed = await uploadAttempt(attempt, {
      fail: { name: "DownloadFailed", message: "no answer within 15000 ms", userMessage: "" },
    });
    return internal(
      "/internal/results",
      { method: "POST", body: JSON.stringify(failed) },
      attempt.callback.token,
    );
  }

  it("may still settle the job with a completed result, but its failure cannot end the job", async () => {
    const { account, job, requests } = await dispatchedJob();
    await ageLease(job);
    await keepJobGoing(env, { kind: "job", id: job.id });
    await vi.waitFor(() => expect(requests).toHaveLength(2));
    const [replaced] = requests;
    // Its failure is refused and the job is unchanged.
    expect((await postHangFailure(replaced)).status).toBe(409);
    expect(await readAttemptState(env, job)).toMatchObject({
      status: "processing",
      attemptId: requests[1].attempt_id,
      settled: false,
    });
    // A completed result of it is real work: it settles the job, once.
    await runFakeExtraction(replaced, { framesOk: 2 });
    const read = (await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth })).body;
    expect(read).toMatchObject({ status: "completed", credits_charged: 2 });
    expect(read.frames[0].url).toContain(replaced.attempt_id);
  });

  it("cannot end the job with a failure once its lease ran out, before another attempt starts", async () => {
    // The backstop logs the lost lease, then starts the next attempt: a hung attempt woken in
    // between still holds the job, and its failure is most likely the hang itself.
    const { account, job, requests } = await dispatchedJob();
    await ageLease(job);
    const [hung] = requests;
    expect((await postHangFailure(hung)).status).toBe(409);
    expect(await readAttemptState(env, job)).toMatchObject({
      status: "processing",
      attemptId: hung.attempt_id,
      settled: false,
    });
    // The backstop then starts another attempt, which settles the job.
    await keepJobGoing(env, { kind: "job", id: job.id });
    await vi.waitFor(() => expect(requests).toHaveLength(2));
    await runFakeExtraction(requests[1], { framesOk: 2 });
    const read = (await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth })).body;
    expect(read).toMatchObject({ status: "completed", credits_charged: 2 });
    expect(read.frames[0].url).toContain(requests[1].attempt_id);
  });

  it("nor once the next attempt was turned away busy (the hung one still holds the slot)", async () => {
    // Seen on the real stack: woken, the hung attempt still holds its tenant's slot, so the
    // extractor answers the next attempt 503; that attempt is released (queued, no lease), and
    // the hung one's failure arrives after it.
    const { account, job, requests } = await dispatchedJob();
    await ageLease(job);
    setExtractor((r) => {
      requests.push(r);
      return new Response("busy", { status: 503, headers: { "retry-after": "5" } });
    });
    await keepJobGoing(env, { kind: "job", id: job.id });
    await vi.waitFor(() => expect(requests).toHaveLength(2));
    expect(await readAttemptState(env, job)).toMatchObject({ status: "queued" });
    const [hung] = requests;
    expect((await postHangFailure(hung)).status).toBe(409);
    expect(await readAttemptState(env, job)).toMatchObject({ status: "queued", settled: false });
    setExtractor((r) => {
      requests.push(r);
      return Response.json({ accepted: true }, { status: 202 });
    });
    await keepJobGoing(env, { kind: "job", id: job.id });
    await vi.waitFor(() => expect(requests).toHaveLength(3));
    await runFakeExtraction(requests[2], { framesOk: 2 });
    const read = (await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth })).body;
    expect(read).toMatchObject({ status: "completed", credits_charged: 2 });
  });

  it("is found by the cron, which hands the job back to the queue; a live lease is left alone", async () => {
    const lost = await queuedJob();
    const alive = await queuedJob();
    await startAttempt(env, lost.job, "lost-attempt", 30);
    await startAttempt(env, alive.job, "live-attempt", 30);
    await ageLease(lost.job);
    const send = vi.spyOn(env.JOBS_QUEUE, "send");
    try {
      await redispatchLostAttempts(env, Date.now());
      const sentIds = send.mock.calls.map(([body]) => (body as { id: string }).id);
      expect(sentIds).toContain(lost.job.id);
      expect(sentIds).not.toContain(alive.job.id);
    } finally {
      send.mockRestore();
    }
  });
});
