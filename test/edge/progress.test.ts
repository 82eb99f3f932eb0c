// job.progress at the edge (decision 0230): the rules of the job's JobWaiter as data, and the
// whole path through the real /internal/jobs/job/{id}/progress route, the job's Durable
// Object and D1: only the current attempt reports, never backwards, never after settlement, a
// new attempt never makes what readers see go back, and no report writes D1.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, type MockInstance, vi } from "vitest";
import { applyReport, type JobWaiter, jobWaiter } from "../../edge/durable/job-waiter.ts";
import { startAttempt } from "../../edge/jobs/lifecycle.ts";
import type { ExtractRequest, ProgressReport } from "../../schema/messages.ts";
import { api, createAccount } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { internal, runFakeExtraction, tokenFor } from "./support/pipeline.ts";

const NOW = "2026-01-01T00:00:00.000Z";
const LATER = "2026-01-01T00:00:01.000Z";

describe("the JobWaiter's progress rules (applyReport)", () => {
  const begun = { attempt: "a1", reported: null, shown: null };

  it("takes the current attempt's reports as they go forward, with the edge's time", () => {
    const first = applyReport(
      begun,
      "a1",
      { stage: "probing", frames_done: 0, frames_total: null },
      NOW,
    );
    expect(first).toMatchObject({
      shown: { stage: "probing", frames_done: 0, frames_total: null, updated_at: NOW },
    });
    const second = applyReport(
      first as Exclude<typeof first, string>,
      "a1",
      { stage: "extracting", frames_done: 5, frames_total: 40 },
      LATER,
    );
    expect(second).toMatchObject({
      shown: { stage: "extracting", frames_done: 5, frames_total: 40, updated_at: LATER },
    });
  });

  it("refuses fewer frames or an earlier stage from the same attempt", () => {
    const state = {
      attempt: "a1",
      reported: { stage: "extracting", frames_done: 5, frames_total: 40 } as const,
      shown: { stage: "extracting", frames_done: 5, frames_total: 40, updated_at: NOW } as const,
    };
    expect(
      applyReport(state, "a1", { stage: "extracting", frames_done: 4, frames_total: 40 }, LATER),
    ).toBe("goes-back");
    expect(
      applyReport(state, "a1", { stage: "probing", frames_done: 6, frames_total: 40 }, LATER),
    ).toBe("goes-back");
    // The same numbers again are not going back: only the time moves.
    expect(
      applyReport(state, "a1", { stage: "extracting", frames_done: 5, frames_total: 40 }, LATER),
    ).toMatchObject({ shown: { frames_done: 5, updated_at: LATER } });
  });

  it("does not know another attempt, nor any before the dispatch named one", () => {
    const report = { stage: "fetching", frames_done: 0, frames_total: null } as const;
    expect(applyReport(begun, "a2", report, NOW)).toBe("unknown-attempt");
    expect(applyReport(null, "a1", report, NOW)).toBe("unknown-attempt");
  });

  it("a new attempt starts from nothing, but what is shown holds until it passes it", () => {
    // a1 reached extracting 30/40, then died; the dispatch began a2.
    const after = {
      attempt: "a2",
      reported: null,
      shown: { stage: "extracting", frames_done: 30, frames_total: 40, updated_at: NOW } as const,
    };
    const early = applyReport(
      after,
      "a2",
      { stage: "fetching", frames_done: 0, frames_total: null },
      LATER,
    );
    expect(early).toMatchObject({
      reported: { stage: "fetching", frames_done: 0 },
      shown: { stage: "extracting", frames_done: 30, frames_total: 40, updated_at: LATER },
    });
    const past = applyReport(
      early as Exclude<typeof early, string>,
      "a2",
      { stage: "uploading", frames_done: 40, frames_total: 40 },
      LATER,
    );
    expect(past).toMatchObject({
      shown: { stage: "uploading", frames_done: 40, frames_total: 40 },
    });
  });
});

async function reportAs(
  token: string,
  jobId: string,
  attemptId: string,
  body: Omit<ProgressReport, "attempt_id">,
) {
  return internal(
    `/internal/jobs/job/${jobId}/progress`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ attempt_id: attemptId, ...body }),
    },
    token,
  );
}

const jobRow = (id: string) =>
  env.DB.prepare("SELECT * FROM jobs WHERE id = ?").bind(id).first<Record<string, unknown>>();

describe("POST /internal/jobs/job/{id}/progress → job.progress", () => {
  it("is shown on the job and its list row while processing, and no report writes D1", async () => {
    const { request, auth: account } = await dispatched(4);
    const attempt = request.attempt_id as string;
    const token = request.callback.token;
    const before = await jobRow(request.job_id);

    const read = async () =>
      (await api("GET", `/v1/jobs/${request.job_id}`, { headers: account })).body;
    // Dispatched, nothing reported yet.
    expect((await read()).progress).toBeNull();

    const steps: Omit<ProgressReport, "attempt_id">[] = [
      { stage: "fetching", frames_done: 0, frames_total: null },
      { stage: "probing", frames_done: 0, frames_total: null },
      { stage: "extracting", frames_done: 0, frames_total: 4 },
    ];
    for (let done = 1; done <= 4; done++) {
      steps.push({ stage: "extracting", frames_done: done, frames_total: 4 });
    }
    // Twenty reports of the same progress beside them: none of it reaches D1.
    for (let i = 0; i < 13; i++)
      steps.push({ stage: "uploading", frames_done: 4, frames_total: 4 });
    let lastTime = "";
    for (const step of steps) {
      const answer = await reportAs(token, request.job_id, attempt, step);
      expect(answer.status).toBe(200);
      const job = await read();
      expect(job.status).toBe("processing");
      expect(job.progress).toMatchObject(step);
      expect(Date.parse(job.progress.updated_at)).not.toBeNaN();
      expect(job.progress.updated_at >= lastTime).toBe(true);
      lastTime = job.progress.updated_at;
    }
    expect(await jobRow(request.job_id)).toEqual(before);

    const list = await api("GET", "/v1/jobs?status=processing", { headers: account });
    const row = list.body.data.find((j: { id: string }) => j.id === request.job_id);
    expect(row.progress).toMatchObject({ stage: "uploading", frames_done: 4, frames_total: 4 });
  });

  it("a report that moves only the time is not written to storage; one that moves more is", async () => {
    const { request, auth: account } = await dispatched(4);
    const attempt = request.attempt_id as string;
    const token = request.callback.token;
    let puts: MockInstance | undefined;
    await runInDurableObject(jobWaiter(env, "job", request.job_id), (_: JobWaiter, state) => {
      puts = vi.spyOn(state.storage, "put");
    });
    const writes = () => (puts?.mock.calls ?? []).filter(([key]) => key === "progress").length;
    const waiting = { stage: "waiting", frames_done: 0, frames_total: null } as const;
    expect((await reportAs(token, request.job_id, attempt, waiting)).status).toBe(200);
    expect(writes()).toBe(1);
    // An attempt waiting in the extractor's room says the same again and again: kept in memory.
    for (let i = 0; i < 10; i++) {
      expect((await reportAs(token, request.job_id, attempt, waiting)).status).toBe(200);
    }
    expect(writes()).toBe(1);
    const job = (await api("GET", `/v1/jobs/${request.job_id}`, { headers: account })).body;
    expect(job.progress).toMatchObject(waiting);
    // A new stage, then each new frame, is written at once.
    const steps = [
      { stage: "extracting", frames_done: 0, frames_total: 4 },
      { stage: "extracting", frames_done: 1, frames_total: 4 },
      { stage: "extracting", frames_done: 1, frames_total: 4 },
      { stage: "extracting", frames_done: 2, frames_total: 4 },
    ] as const;
    for (const step of steps) await reportAs(token, request.job_id, attempt, step);
    expect(writes()).toBe(4);
    puts?.mockRestore();
  });

  it("refuses going back (400), another attempt (409), a wrong token (401), a demo (400)", async () => {
    const { request, auth: account } = await dispatched(4);
    const attempt = request.attempt_id as string;
    const token = request.callback.token;
    const at = { stage: "extracting", frames_done: 3, frames_total: 4 } as const;
    expect((await reportAs(token, request.job_id, attempt, at)).status).toBe(200);

    const lower = await reportAs(token, request.job_id, attempt, { ...at, frames_done: 2 });
    expect(lower.status).toBe(400);
    const earlier = await reportAs(token, request.job_id, attempt, { ...at, stage: "probing" });
    expect(earlier.status).toBe(400);
    // An attempt the edge never started, with a token that fits it: not the job's attempt.
    const stranger = crypto.randomUUID();
    const replaced = await reportAs(
      await tokenFor("job", request.job_id, stranger),
      request.job_id,
      stranger,
      { ...at, frames_done: 4 },
    );
    expect(replaced.status).toBe(409);
    const wrongToken = await reportAs(
      await tokenFor("job", request.job_id, stranger),
      request.job_id,
      attempt,
      { ...at, frames_done: 4 },
    );
    expect(wrongToken.status).toBe(401);
    const demo = await reportAs(token, request.job_id, attempt, at).then(() =>
      internal(`/internal/jobs/demo/${request.job_id}/progress`, {
        method: "POST",
        body: JSON.stringify({ attempt_id: attempt, ...at }),
      }),
    );
    expect(demo.status).toBe(400);

    // Reports that are not reports.
    for (const body of [
      { ...at, frames_done: -1 },
      { ...at, frames_done: 1.5 },
      { ...at, frames_done: 1e9 },
      { ...at, stage: "done" },
      { stage: at.stage, frames_done: 3 },
    ]) {
      const bad = await reportAs(token, request.job_id, attempt, body as typeof at);
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const notJson = await internal(
      `/internal/jobs/job/${request.job_id}/progress`,
      { method: "POST", body: "{" },
      token,
    );
    expect(notJson.status).toBe(400);

    const job = (await api("GET", `/v1/jobs/${request.job_id}`, { headers: account })).body;
    expect(job.progress).toMatchObject(at);
  });

  it("after a restart the new attempt reports, the old one is refused, and nothing goes back", async () => {
    const { request, auth: account } = await dispatched(4);
    const first = request.attempt_id as string;
    const at = { stage: "extracting", frames_done: 3, frames_total: 4 } as const;
    expect((await reportAs(request.callback.token, request.job_id, first, at)).status).toBe(200);

    // The first attempt's lease ran out and the backstop started another. The JobWaiter is not
    // told here (as when the dispatch's call to it failed): D1 decides on its first report.
    await env.DB.prepare("UPDATE jobs SET lease_expires_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), request.job_id)
      .run();
    const second = crypto.randomUUID();
    const job = { kind: "job", id: request.job_id } as const;
    expect(await startAttempt(env, job, second, 30)).toBe(true);
    const secondToken = await tokenFor("job", request.job_id, second);

    const fresh = { stage: "fetching", frames_done: 0, frames_total: null } as const;
    expect((await reportAs(secondToken, request.job_id, second, fresh)).status).toBe(200);
    const read = async () =>
      (await api("GET", `/v1/jobs/${request.job_id}`, { headers: account })).body.progress;
    expect(await read()).toMatchObject(at);

    // The replaced attempt can no longer move it, even forward.
    const stale = await reportAs(request.callback.token, request.job_id, first, {
      ...at,
      frames_done: 4,
    });
    expect(stale.status).toBe(409);
    expect(await read()).toMatchObject(at);

    const passed = { stage: "uploading", frames_done: 4, frames_total: 4 } as const;
    expect((await reportAs(secondToken, request.job_id, second, passed)).status).toBe(200);
    expect(await read()).toMatchObject(passed);
  });

  it("a completed job shows its last progress; a report after settlement is refused", async () => {
    const { request, auth: account } = await dispatched(4);
    const at = { stage: "extracting", frames_done: 2, frames_total: 4 } as const;
    const attempt = request.attempt_id as string;
    expect((await reportAs(request.callback.token, request.job_id, attempt, at)).status).toBe(200);
    await runFakeExtraction(request, { framesOk: 3, framesFailed: 1 });

    const job = (await api("GET", `/v1/jobs/${request.job_id}`, { headers: account })).body;
    expect(job.status).toBe("completed");
    // frames_count counts every frame, the one in error too.
    expect(job.frames_count).toBe(4);
    expect(job.progress).toEqual({
      stage: "finishing",
      frames_done: 4,
      frames_total: 4,
      updated_at: job.completed_at,
    });
    const late = await reportAs(request.callback.token, request.job_id, attempt, {
      stage: "finishing",
      frames_done: 4,
      frames_total: 4,
    });
    expect(late.status).toBe(409);
  });

  it("a failed job shows none", async () => {
    const { request, auth: account } = await dispatched(2);
    expect(
      (
        await reportAs(request.callback.token, request.job_id, request.attempt_id as string, {
          stage: "probing",
          frames_done: 0,
          frames_total: null,
        })
      ).status,
    ).toBe(200);
    await runFakeExtraction(request, {
      fail: { name: "NoVideoFound", message: "none", userMessage: "No video." },
    });
    const job = (await api("GET", `/v1/jobs/${request.job_id}`, { headers: account })).body;
    expect(job.status).toBe("failed");
    expect(job.progress).toBeNull();
  });
});

/** A job of `count` frames dispatched to a stand-in that accepts it; its request and owner. */
async function dispatched(count: number) {
  const account = await createAccount({ plan: "starter" });
  let request: ExtractRequest | undefined;
  setExtractor((r) => {
    request = r;
    return Response.json({ accepted: true }, { status: 202 });
  });
  const created = await api("POST", "/v1/jobs", {
    body: { url: "https://cdn.example.com/clips/progress.mp4", count },
    headers: account.auth,
  });
  await vi.waitFor(() => expect(request?.job_id).toBe(created.body.id));
  return { request: request as ExtractRequest, auth: account.auth };
}
