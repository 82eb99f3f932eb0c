// Issue 17.4 and 17.5: what a job says about itself agrees with its data. The list filter and
// the status field agree after expiry; the notice follows the state (processing, expired);
// the resolution note names the size delivered.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { forgetSettledJobs } from "../../edge/jobs/read.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { api, createAccount } from "./support/api.ts";
import { postResult, uploadAttempt } from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";

async function completedJob(body: Record<string, unknown>, adjust = {}) {
  const account = await createAccount({ plan: "starter" });
  const created = await api("POST", "/v1/jobs", {
    body: { url: VIDEO, ...body },
    headers: account.auth,
  });
  expect(created.status).toBe(201);
  const request = {
    job_id: created.body.id,
    kind: "job",
    options: created.body.options,
  } as unknown as ExtractRequest;
  await postResult({ ...(await uploadAttempt(request, { framesOk: 2 })), ...adjust });
  let job: any;
  await vi.waitFor(
    async () => {
      job = (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth })).body;
      expect(job.status).toBe("completed");
    },
    { timeout: 10_000, interval: 100 },
  );
  return { account, job };
}

async function expireNow(id: string) {
  const past = new Date(Date.now() - 60_000).toISOString();
  await env.DB.prepare("UPDATE jobs SET expires_at = ? WHERE id = ?").bind(past, id).run();
  // The isolate remembers the job as it was read (settled jobs do not change in production).
  forgetSettledJobs();
  return past;
}

describe("after expiry, before the cron run", () => {
  it("the completed filter no longer lists a job whose status reads expired", async () => {
    const { account, job } = await completedJob({ count: 2 });
    const listed = await api("GET", "/v1/jobs?status=completed", { headers: account.auth });
    expect(listed.body.data.map((j: { id: string }) => j.id)).toEqual([job.id]);
    await expireNow(job.id);
    const filtered = await api("GET", "/v1/jobs?status=completed", { headers: account.auth });
    expect(filtered.body).toMatchObject({ total: 0, data: [] });
    const all = await api("GET", "/v1/jobs", { headers: account.auth });
    expect(all.body.data.map((j: { status: string }) => j.status)).toEqual(["expired"]);
  });

  it("the notice of an expired job no longer promises files until a past date", async () => {
    const { account, job } = await completedJob({ count: 2 });
    expect(job.notice).toMatch(/^Completed\. Files are available until /);
    expect(job.notice).toContain(job.expires_at);
    const past = await expireNow(job.id);
    const read = (await api("GET", `/v1/jobs/${job.id}`, { headers: account.auth })).body;
    expect(read.status).toBe("expired");
    expect(read.notice).toMatch(/^Expired/);
    expect(read.notice).toContain(past);
    expect(read.notice).not.toContain("available until");
  });
});

describe("notice", () => {
  // wait=true answers through the same serializer when it times out on a processing job.
  it("says Processing once the job is processing, not Queued", async () => {
    const account = await createAccount();
    const created = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, count: 1 },
      headers: account.auth,
    });
    // No extractor answers here (503 busy), so the create route's dispatch gives the job back.
    let queued: any;
    await vi.waitFor(
      async () => {
        queued = (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth })).body;
        expect(queued.status).toBe("queued");
      },
      { timeout: 5000, interval: 50 },
    );
    expect(queued.notice).toMatch(/^Queued\. Poll GET \/v1\/jobs\//);
    expect(queued.notice).toContain(created.body.id);
    await env.DB.prepare("UPDATE jobs SET status = 'processing' WHERE id = ?")
      .bind(created.body.id)
      .run();
    const read = (await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth })).body;
    expect(read.status).toBe("processing");
    expect(read.notice).toMatch(/^Processing/);
    expect(read.notice).not.toContain("Queued");
  });
});

describe("resolution_note", () => {
  it("names the size delivered when max_width shrinks frames below a smaller source", async () => {
    // A 720p source, 1080 requested, max_width 64: 64×36 frames.
    const { job } = await completedJob(
      { count: 2, resolution: "1080", max_width: 64 },
      {
        width: 1280,
        height: 720,
        delivered_resolution: 36,
        resolution_note:
          "The video is 720p, below the requested 1080p; frames are delivered at 720p because they are never upscaled.",
      },
    );
    expect(job.delivered_resolution).toBe(36);
    expect(job.resolution_note).toBe(
      "The video is 720p, below the requested 1080p, and frames are never upscaled; to fit a width of 64 px they are delivered at 36p.",
    );
    expect(job.notice).toContain(job.resolution_note);
  });

  it("names the token budget, not the plan's width, when a budget narrowed the frames", async () => {
    // A 720p source, 1080 requested, a budget that chose 816 px: 816×459 frames.
    const { job } = await completedJob(
      { budget: { tokens: 3000, model: "claude" } },
      {
        width: 1280,
        height: 720,
        delivered_resolution: 459,
        budget: {
          tokens: 3000,
          model: "claude",
          tokens_estimated: 3000,
          per_frame: 500,
          frames: 2,
          width: 816,
          height: 459,
        },
      },
    );
    expect(job.delivered_resolution).toBe(459);
    expect(job.resolution_note).toBe(
      "The video is 720p, below the requested 1080p, and frames are never upscaled; to fit the token budget (816 px wide) they are delivered at 459p.",
    );
    expect(job.notice).toContain(job.resolution_note);
  });

  it("explains a smaller source alone, and says nothing when frames are as requested", async () => {
    const smaller = await completedJob(
      { count: 2, resolution: "1080" },
      { width: 1280, height: 720, delivered_resolution: 720 },
    );
    expect(smaller.job.resolution_note).toBe(
      "The video is 720p, below the requested 1080p; frames are delivered at 720p because they are never upscaled.",
    );
    const exact = await completedJob(
      { count: 2, resolution: "720" },
      { width: 1280, height: 720, delivered_resolution: 720 },
    );
    expect(exact.job.resolution_note).toBeNull();
  });
});
