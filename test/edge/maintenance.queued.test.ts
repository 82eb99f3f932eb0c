// Issue 33: a job still `queued` when the local stack stopped (its creation's dispatch and its
// backstop message both died with `wrangler dev`) is handed back to the jobs queue by the cron,
// and goes on from there through the real queue and consumer; a job that is queued on its way
// to its first look is left alone (decision 0180).
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { type JobRef, readAttemptState, tableOf } from "../../edge/jobs/lifecycle.ts";
import { firstLookDelaySeconds } from "../../edge/jobs/start.ts";
import {
  QUEUED_STRANDED_AFTER_MS,
  redispatchQueuedJobs,
  runScheduledMaintenance,
} from "../../edge/maintenance.ts";
import type { ExtractRequest, JobMessage } from "../../schema/messages.ts";
import { api, createAccount } from "./support/api.ts";
import { extractorCalls, setExtractor } from "./support/fake-extractor.ts";
import { runFakeExtraction } from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";
/** What a send answers that never reaches the queue: the message is lost. */
const LOST = {} as QueueSendResponse;

/**
 * A job (or demo) created through the API whose backstop message is lost and whose first
 * dispatch met a down extractor: it is queued, and no message will ever look at it again.
 * With `neverDispatched` its row is as if that dispatch never ran either.
 */
async function strandedJob(kind: "job" | "demo", options: { neverDispatched?: boolean } = {}) {
  const send = vi.spyOn(env.JOBS_QUEUE, "send").mockResolvedValueOnce(LOST);
  let id: string;
  try {
    const created =
      kind === "job"
        ? await api("POST", "/v1/jobs", {
            body: { url: VIDEO, count: 2 },
            headers: (await createAccount({ plan: "starter" })).auth,
          })
        : await api("POST", "/v1/demo", { body: { url: VIDEO } });
    expect(created.status).toBe(201);
    id = created.body.id;
  } finally {
    send.mockRestore();
  }
  const job: JobRef = { kind, id };
  await vi.waitFor(
    async () => {
      expect(extractorCalls.map((c) => c.job_id)).toContain(job.id);
      expect((await readAttemptState(env, job))?.status).toBe("queued");
    },
    { timeout: 5000, interval: 50 },
  );
  if (options.neverDispatched) {
    await env.DB.prepare(
      `UPDATE ${tableOf(kind)} SET attempt_id = NULL, attempts = 0, started_at = NULL WHERE id = ?`,
    )
      .bind(job.id)
      .run();
  }
  return job;
}

async function age(job: JobRef, msAgo: number) {
  await env.DB.prepare(`UPDATE ${tableOf(job.kind)} SET created_at = ? WHERE id = ?`)
    .bind(new Date(Date.now() - msAgo).toISOString(), job.id)
    .run();
}

const sentIds = (send: { mock: { calls: unknown[][] } }) =>
  send.mock.calls.map(([body]) => (body as JobMessage).id);

describe("queued jobs with no message left", () => {
  it("are handed back to the queue by the cron, and the consumer runs them to the end", async () => {
    const job = await strandedJob("job", { neverDispatched: true });
    const demo = await strandedJob("demo");
    await age(job, 5 * 60_000);
    await age(demo, QUEUED_STRANDED_AFTER_MS + 1000);
    const requests: ExtractRequest[] = [];
    setExtractor((request) => {
      requests.push(request);
      return Response.json({ accepted: true }, { status: 202 });
    });
    const send = vi.spyOn(env.JOBS_QUEUE, "send");
    const logged = vi.spyOn(console, "error");
    try {
      await runScheduledMaintenance(env, Date.now());
      expect(send).toHaveBeenCalledWith({ kind: "job", id: job.id });
      expect(send).toHaveBeenCalledWith({ kind: "demo", id: demo.id });
      const lines = logged.mock.calls.map(([line]) => JSON.parse(String(line)));
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ event: "job.requeued", job: job.id, kind: "job" }),
          expect.objectContaining({ event: "job.requeued", job: demo.id, kind: "demo" }),
        ]),
      );
    } finally {
      send.mockRestore();
      logged.mockRestore();
    }
    // The messages go through the real queue: its consumer starts one attempt of each.
    await vi.waitFor(
      () => expect(requests.map((r) => r.job_id).sort()).toEqual([job.id, demo.id].sort()),
      { timeout: 10_000, interval: 100 },
    );
    expect(await readAttemptState(env, job)).toMatchObject({ status: "processing", attempts: 1 });
    expect(await readAttemptState(env, demo)).toMatchObject({ status: "processing" });
    const run = requests.find((r) => r.job_id === job.id) as ExtractRequest;
    await runFakeExtraction(run, { framesOk: 2 });
    const done = await env.DB.prepare("SELECT status, credits_charged FROM jobs WHERE id = ?")
      .bind(job.id)
      .first();
    expect(done).toEqual({ status: "completed", credits_charged: 2 });
  });

  it("leave a job on its way to its first look alone, and a settled or running one", async () => {
    // The bound is well past the first look, which every healthy job has had by then.
    expect(QUEUED_STRANDED_AFTER_MS).toBeGreaterThanOrEqual(3 * firstLookDelaySeconds(env) * 1000);
    const fresh = await strandedJob("job", { neverDispatched: true });
    await age(fresh, firstLookDelaySeconds(env) * 1000 + 2000);
    const settled = await strandedJob("job");
    await age(settled, 5 * 60_000);
    // Settled a moment ago (the settlements row decides), its status not yet written.
    await env.DB.prepare("INSERT INTO settlements (job_id, attempt_id) VALUES (?, 'last')")
      .bind(settled.id)
      .run();
    const running = await strandedJob("job");
    await age(running, 5 * 60_000);
    await env.DB.prepare("UPDATE jobs SET status = 'processing', lease_expires_at = ? WHERE id = ?")
      .bind(new Date(Date.now() + 30_000).toISOString(), running.id)
      .run();
    const send = vi.spyOn(env.JOBS_QUEUE, "send").mockResolvedValue(LOST);
    try {
      await redispatchQueuedJobs(env, Date.now());
      const sent = sentIds(send);
      expect(sent).not.toContain(fresh.id);
      expect(sent).not.toContain(settled.id);
      expect(sent).not.toContain(running.id);
      // Once past the bound, the same job is handed back.
      await redispatchQueuedJobs(env, Date.now() + QUEUED_STRANDED_AFTER_MS);
      expect(sentIds(send)).toContain(fresh.id);
    } finally {
      send.mockRestore();
    }
  });

  it("are handed back at most 100 a table per run, oldest first", async () => {
    const first = await strandedJob("job");
    await age(first, 10 * 60_000);
    // 120 copies of it, each a second younger than the last, all queued for minutes.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
       INSERT INTO jobs (id, account_id, status, url, source_url, platform, options, created_at)
       SELECT 'copy-' || printf('%03d', i), account_id, status, url, source_url, platform,
              options, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-5 minutes', '-' || i || ' seconds')
       FROM jobs, n WHERE id = ?`,
    )
      .bind(first.id)
      .run();
    const send = vi.spyOn(env.JOBS_QUEUE, "send").mockResolvedValue(LOST);
    try {
      const handed = await redispatchQueuedJobs(env, Date.now());
      const jobs = send.mock.calls
        .map(([body]) => body as JobMessage)
        .filter((m) => m.kind === "job")
        .map((m) => m.id);
      expect(jobs).toHaveLength(100);
      expect(handed).toBeGreaterThanOrEqual(100);
      // The oldest: the first job, then the copies from the oldest (copy-120) down.
      expect(jobs[0]).toBe(first.id);
      expect(jobs[1]).toBe("copy-120");
      expect(jobs[99]).toBe("copy-022");
    } finally {
      send.mockRestore();
    }
  });
});
