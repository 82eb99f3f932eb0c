// Issue 11 on the real stack: an extractor that hangs in the middle of a job (SIGSTOP: alive,
// silent) stops renewing its attempt's lease; once the lease runs out the edge starts a new
// attempt, the job completes once and is charged once, and the hung attempt, woken again,
// is told its lease is gone and cancels instead of finishing the same work a second time.
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import { call, type Harness, startHarness } from "./support/harness.ts";

let h: Harness;
let longVideo: string;

beforeAll(async () => {
  h = await startHarness({
    own: "it stops the extractor with SIGSTOP, and runs with a short lease",
    // Time the test controls: a 6 s lease (renewed every 2 s) instead of 30 s, so the backstop
    // takes a hung attempt's job over in seconds, not half a minute.
    JOB_LEASE_SECONDS: "6",
  });
  longVideo = h.serveVideo(
    "/media/long.mp4",
    await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 90, gop: 60 }),
  );
});

afterAll(async () => {
  await h?.close();
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 500));
  }
  const logs = `${h.stack.logTail("edge")}\n${h.stack.logTail("extractor")}`.slice(-4000);
  throw new Error(`timed out waiting for ${what}\n${logs}`);
}

/** The attempt the edge logged as having lost its lease, once it has. */
function leaseLost(jobId: string): string | undefined {
  for (const line of h.stack.logTail("edge").split("\n")) {
    // wrangler wraps a worker's warnings in colour codes: the JSON is from { to }.
    const start = line.indexOf("{");
    const end = line.lastIndexOf("}");
    if (start < 0 || end < start || !line.includes("job.lease_lost")) continue;
    try {
      const event = JSON.parse(line.slice(start, end + 1)) as { job?: string; attempt?: string };
      if (event.job === jobId && event.attempt) return event.attempt;
    } catch {}
  }
  return undefined;
}

async function attemptOf(jobId: string): Promise<{ attempt_id: string | null; attempts: number }> {
  const [row] = await h.query(`SELECT attempt_id, attempts FROM jobs WHERE id = '${jobId}'`);
  return { attempt_id: row.attempt_id as string | null, attempts: Number(row.attempts) };
}

it("a hung extractor loses the job to a new attempt; it completes once, charged once", async () => {
  const account = await h.newKey("starter");
  // 450 PNG frames of a 90 s video: long enough to be caught in the middle.
  const created = await call(h.stack, "POST", "/jobs", {
    body: { url: longVideo, every: 0.2, format: "png" },
    headers: account.auth,
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  await waitFor(
    "processing",
    async () => {
      const job = await call(h.stack, "GET", `/jobs/${id}`, { headers: account.auth });
      return job.body.status === "processing" ? true : undefined;
    },
    60_000,
  );
  const extractor = h.stack.children.extractor;
  extractor.kill("SIGSTOP");
  let hung: string;
  try {
    // The lease (6 s here) runs out without renewals; the jobs-queue backstop says so and starts a
    // new attempt. (Watched in the edge's log: D1 queries here would block this process, which
    // also serves the video.)
    hung = await waitFor("the lease to be lost", async () => leaseLost(id), 120_000);
  } finally {
    extractor.kill("SIGCONT");
  }

  const job = await waitFor(
    "completion",
    async () => {
      const read = await call(h.stack, "GET", `/jobs/${id}`, { headers: account.auth });
      return read.body.status === "completed" || read.body.status === "failed"
        ? read.body
        : undefined;
    },
    240_000,
  );
  // On failure, the stack's own account of the attempts (quiet stacks keep their logs).
  const logs = `${h.stack.logTail("edge")}\n${h.stack.logTail("extractor")}`.slice(-6000);
  expect({ status: job.status, error: job.error }, logs).toEqual({
    status: "completed",
    error: null,
  });
  expect(job.frames).toHaveLength(450);
  // Every frame comes from one later attempt, none from the hung one.
  const attempts = new Set(
    job.frames.map((f: { url: string }) => new URL(f.url).pathname.split("/")[4]),
  );
  expect(attempts.size).toBe(1);
  expect(attempts.has(hung)).toBe(false);
  expect((await attemptOf(id)).attempts).toBeGreaterThanOrEqual(2);
  // 90 s → 2 minutes, 200 frames included, 250 more → 3 extra credits: charged once.
  expect(job.credits_charged).toBe(5);
  const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
  const charges = usage.body.recent_ledger.filter(
    (e: { job_id: string; kind: string }) => e.job_id === id && e.kind === "charge",
  );
  expect(charges).toHaveLength(1);
  expect(usage.body.credits).toMatchObject({ plan: 1500 - 5 });
  // The hung attempt, woken, ended without settling anything: cancelled at its next lease
  // renewal, or (when its source had timed out while it was stopped) its failure refused.
  const endings = h.stack
    .logTail("extractor")
    .split("\n")
    .filter((line: string) => line.includes('"job.ended"') && line.includes(hung as string));
  expect(endings).toHaveLength(1);
  expect(endings[0]).toMatch(/"delivery":"(cancelled|refused)"/);
}, 420_000);

it("a job whose video costs more than the account can pay stops once probed, before any frame", async () => {
  const account = await h.newKey("free");
  // One credit left, spent through the ledger as a real account's would be.
  await h.execute(`INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
       SELECT 'test-spent:' || id, id, 'adjust', 1 - plan_credits, 'lease test'
       FROM accounts WHERE email = '${account.email}';
     UPDATE accounts SET plan_credits = 1 WHERE email = '${account.email}';`);
  // Every second of 90 s: 2 started minutes, 2 credits at least; the job holds the 1 there is.
  const created = await call(h.stack, "POST", "/jobs", {
    body: { url: longVideo, every: 1, wait: true },
    headers: account.auth,
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({
    status: "failed",
    credits_charged: 0,
    frames: [],
    error: { name: "InsufficientBalance" },
  });
  expect(created.body.error.message).toContain("at least 2 credits");
  const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
  expect(usage.body.credits).toMatchObject({ available: 1, plan: 1 });
  // The real extractor was told by its lease renewal and cancelled before decoding a frame.
  // The renewal (every 2 s here) can come after the job's answer, so its log is read until it
  // says so, for up to 10 s; a full run once read it a moment too early.
  const id = created.body.id;
  const linesOfJob = () =>
    h.stack
      .logTail("extractor")
      .split("\n")
      .filter((line) => line.includes(id));
  let lines = linesOfJob();
  for (let i = 0; i < 40 && !lines.some((line) => line.includes("job cancelled")); i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    lines = linesOfJob();
  }
  expect(lines.some((line) => line.includes("video.probed"))).toBe(true);
  expect(lines.some((line) => line.includes("job cancelled"))).toBe(true);
  expect(lines.some((line) => line.includes("frames.decoded"))).toBe(false);
});
