// Faults on the real stack: the extractor killed in the middle of a job, the same result
// delivered twice, and the extractor down at dispatch. Each job must finish once and be
// charged once. A crashed extractor is started again by the stack, as the container platform
// does, and no secret is ever on a command line.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import {
  attemptTokenFor,
  call,
  type Harness,
  startHarness,
  startReceiver,
} from "./support/harness.ts";

let h: Harness;
let longVideo: string;
let shortVideo: string;

beforeAll(async () => {
  h = await startHarness({
    own: "it kills, stops and restarts the extractor",
    // Time the test controls: a 10 s lease (renewed every 3 s) instead of 30 s, so the backstop
    // takes a killed attempt's job over in seconds, not half a minute.
    JOB_LEASE_SECONDS: "10",
  });
  longVideo = h.serveVideo(
    "/media/long.mp4",
    await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 90, gop: 60 }),
  );
  shortVideo = h.serveVideo("/media/short.mp4", await makeTestVideo({ durationSeconds: 4 }));
});

afterAll(async () => {
  await h?.close();
});

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    // Once a second: a starter key's 120 reads a minute last any wait here (at five a second
    // they ran out after about 45 s, and the read after the wait got a 429).
    await new Promise((r) => setTimeout(r, 1000));
  }
  // What the stack logged explains a wait that never ended better than the wait itself.
  const logs = `${h.stack.logTail("edge")}\n${h.stack.logTail("extractor")}`.slice(-4000);
  throw new Error(`timed out waiting for ${what}\n${logs}`);
}

async function chargeEntries(account: { auth: Record<string, string> }, jobId: string) {
  const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
  return usage.body.recent_ledger.filter((e: any) => e.job_id === jobId && e.kind === "charge");
}

it("completes once, charged once, when the extractor is killed in the middle of a job", async () => {
  const account = await h.newKey("starter");
  // 900 frames of a 90 s video: long enough to be caught in the middle.
  const created = await call(h.stack, "POST", "/jobs", {
    body: { url: longVideo, every: 0.1, format: "png" },
    headers: account.auth,
  });
  expect(created.status).toBe(201);
  await waitFor("processing", async () => {
    const job = await call(h.stack, "GET", `/jobs/${created.body.id}`, { headers: account.auth });
    return job.body.status === "processing" ? true : undefined;
  });
  await new Promise((r) => setTimeout(r, 1500));
  await h.stack.stopExtractor("SIGKILL");
  await h.stack.restartExtractor();

  const job = await waitFor(
    "completion",
    async () => {
      const read = await call(h.stack, "GET", `/jobs/${created.body.id}`, {
        headers: account.auth,
      });
      return read.body.status === "completed" || read.body.status === "failed"
        ? read.body
        : undefined;
    },
    180_000,
  );
  expect(job.status).toBe("completed");
  // The kill landed in the middle: the job needed a second attempt.
  const [row] = await h.query(`SELECT attempts FROM jobs WHERE id = '${job.id}'`);
  expect(Number(row.attempts)).toBeGreaterThanOrEqual(2);
  expect(job.frames).toHaveLength(900);
  // 90 s → 2 minutes, 200 frames included, 700 more → 7 extra credits.
  expect(job.credits_charged).toBe(9);
  expect(await chargeEntries(account, job.id)).toHaveLength(1);
  const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
  expect(usage.body.credits).toMatchObject({ plan: 1500 - 9, available: 1500 - 9 });
}, 300_000);

it("charges once when the same result is delivered twice", async () => {
  const account = await h.newKey("starter");
  // The webhook tells when each delivery of the result has been consumed: a redelivered
  // result sends its event again, under the same webhook-id.
  const receiver = await startReceiver();
  const done = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: shortVideo, timestamps: [1, 2], webhook_url: receiver.url },
    headers: account.auth,
  });
  expect(done.body.status).toBe("completed");
  await waitFor("the first webhook", async () =>
    receiver.received.length >= 1 ? true : undefined,
  );
  const attemptId = new URL(done.body.frames[0].url).pathname.split("/")[4];
  // The extractor's result, posted again exactly as the extractor posts it.
  const result = {
    job_id: done.body.id,
    kind: "job",
    attempt_id: attemptId,
    status: "completed",
    duration_seconds: done.body.duration_seconds,
    processed_seconds: done.body.duration_seconds,
    width: done.body.width,
    height: done.body.height,
    requested_resolution: done.body.requested_resolution,
    delivered_resolution: done.body.delivered_resolution,
    resolution_note: done.body.resolution_note,
    frames: done.body.frames.map((f: any) => ({
      ...f,
      key: decodeURIComponent(new URL(f.url).pathname.slice("/files/".length)),
    })),
    zip: null,
    error: null,
  };
  // The attempt's own token, as the extractor held it (issue 12: the shared secret is refused).
  const token = attemptTokenFor(h.stack.secrets.INTERNAL_TOKEN, {
    kind: "job",
    jobId: done.body.id,
    attemptId,
  });
  const withSecret = await fetch(`${h.stack.baseUrl}/internal/results`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${h.stack.secrets.INTERNAL_TOKEN}`,
      "content-type": "application/json",
    },
    body: JSON.stringify(result),
  });
  expect(withSecret.status).toBe(401);
  for (let i = 0; i < 2; i++) {
    const posted = await fetch(`${h.stack.baseUrl}/internal/results`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(result),
    });
    expect(posted.status).toBe(202);
  }
  await waitFor("both redeliveries to be consumed", async () =>
    receiver.received.length >= 3 ? true : undefined,
  );
  await receiver.close();
  expect(new Set(receiver.received.map((hook) => hook.headers["webhook-id"])).size).toBe(1);
  expect(await chargeEntries(account, done.body.id)).toHaveLength(1);
  const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
  expect(usage.body.credits.plan).toBe(1500 - 1);
});

it("waits while the extractor is down at dispatch, then runs the job", async () => {
  const account = await h.newKey("starter");
  await h.stack.stopExtractor();
  try {
    const created = await call(h.stack, "POST", "/jobs", {
      body: { url: shortVideo, count: 2 },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    await new Promise((r) => setTimeout(r, 3000));
    const waiting = await call(h.stack, "GET", `/jobs/${created.body.id}`, {
      headers: account.auth,
    });
    expect(waiting.body.status).toBe("queued");
    expect(waiting.body.credits_charged).toBeNull();
  } finally {
    await h.stack.restartExtractor();
  }
  const list = await call(h.stack, "GET", "/jobs", { headers: account.auth });
  const id = list.body.data[0].id;
  const job = await waitFor("the job to run", async () => {
    const read = await call(h.stack, "GET", `/jobs/${id}`, { headers: account.auth });
    return read.body.status === "completed" ? read.body : undefined;
  });
  expect(job.credits_charged).toBe(1);
  expect(await chargeEntries(account, id)).toHaveLength(1);
}, 180_000);

it("a batch of one playlist link while the extractor is down: 503, nothing created or charged", async () => {
  const account = await h.newKey("starter");
  const before = (await call(h.stack, "GET", "/usage", { headers: account.auth })).body.credits;
  await h.stack.stopExtractor();
  try {
    const res = await call(h.stack, "POST", "/batches", {
      body: { url: "http://127.0.0.1:9/list/feed.xml", count: 2 },
      headers: account.auth,
    });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 503, data: { name: "ServiceUnavailable" } });
  } finally {
    await h.stack.restartExtractor();
  }
  expect((await call(h.stack, "GET", "/batches", { headers: account.auth })).body.total).toBe(0);
  expect((await call(h.stack, "GET", "/jobs", { headers: account.auth })).body.data).toEqual([]);
  const after = (await call(h.stack, "GET", "/usage", { headers: account.auth })).body.credits;
  expect(after).toEqual(before);
});

it("restarts an extractor killed with SIGKILL, logs it, and jobs run on the new one", async () => {
  const killed = h.stack.children.extractor;
  const restartsBefore = h.stack.extractorRestarts;
  killed.kill("SIGKILL");
  const back = await h.stack.extractorReady(30_000);
  expect(back.pid).not.toBe(killed.pid);
  expect(killed.signalCode).toBe("SIGKILL");
  expect(h.stack.extractorRestarts).toBe(restartsBefore + 1);
  expect(h.stackLog.at(-1)).toMatch(/^extractor exited \(SIGKILL\); restarting it in [\d.]+ s/);

  const account = await h.newKey("starter");
  const done = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: shortVideo, timestamps: [1] },
    headers: account.auth,
  });
  expect(done.body.status).toBe("completed");
}, 120_000);

it("keeps the secrets off every command line: wrangler reads them from a mode-0600 file", () => {
  const { INTERNAL_TOKEN, FILE_URL_SECRET } = h.stack.secrets;
  const exposed: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine = "";
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, "latin1");
    } catch {
      continue;
    }
    if (commandLine.includes(INTERNAL_TOKEN) || commandLine.includes(FILE_URL_SECRET)) {
      exposed.push(`${entry}: ${commandLine.replaceAll("\0", " ").slice(0, 200)}`);
    }
  }
  expect(exposed).toEqual([]);
  // wrangler was pointed at the file (its own command line says where), which only we read.
  const wranglerLine = readFileSync(`/proc/${h.stack.children.edge.pid}/cmdline`, "latin1");
  expect(wranglerLine.split("\0")).toContain(h.stack.secretsFile);
  expect(statSync(h.stack.secretsFile).mode & 0o777).toBe(0o600);
  expect(readFileSync(h.stack.secretsFile, "utf8")).toBe(
    `INTERNAL_TOKEN=${INTERNAL_TOKEN}\nFILE_URL_SECRET=${FILE_URL_SECRET}\n`,
  );
});
