// Chaos on the real stack: eight jobs of 40 PNG frames while the extractor process is killed
// with SIGKILL five times, 2–3 s apart. The stack's own restart logic (npm start's, in
// scripts/lib/stack.mjs) must bring it back after every kill; every job must end completed or
// failed, none stuck; the credits spent must equal the jobs' charges, failed jobs must cost
// nothing, and completed jobs must have every frame, as a PNG showing the right picture.
import { afterAll, beforeAll, expect, it } from "vitest";
import { prng } from "../support/fuzz-media.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import { call, download, type Harness, startHarness } from "./support/harness.ts";

const FRAMES = 40;
const VIDEO_SECONDS = 20;
const FPS = 30;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

let h: Harness;
let video: string;

beforeAll(async () => {
  h = await startHarness({
    own: "it kills the extractor with SIGKILL again and again",
    // Time the test controls: a 10 s lease (renewed every 3 s) instead of 30 s, so the backstop
    // takes each killed attempt's job over in seconds, not half a minute.
    JOB_LEASE_SECONDS: "10",
  });
  video = h.serveVideo(
    "/media/chaos.mp4",
    await makeTestVideo({ width: 640, height: 360, fps: FPS, durationSeconds: VIDEO_SECONDS }),
  );
});

afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Account {
  auth: Record<string, string>;
  email: string;
}

async function readJob(account: Account, id: string) {
  return (await call(h.stack, "GET", `/jobs/${id}`, { headers: account.auth })).body;
}

it("survives five SIGKILLs of the extractor: every job ends, credits add up, frames are whole", async () => {
  // Two accounts, so both extractor slots are used (one tenant holds one of two).
  const accounts: Account[] = [await h.newKey("starter"), await h.newKey("starter")];
  const before = await Promise.all(
    accounts.map(async (a) => (await call(h.stack, "GET", "/usage", { headers: a.auth })).body),
  );
  const jobs: { account: Account; id: string }[] = [];
  for (let i = 0; i < 8; i++) {
    const account = accounts[i % 2];
    const created = await call(h.stack, "POST", "/jobs", {
      body: { url: video, count: FRAMES, format: "png" },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    jobs.push({ account, id: created.body.id });
  }
  // The first kill lands in the middle of work.
  for (let i = 0; i < 300; i++) {
    if ((await readJob(jobs[0].account, jobs[0].id)).status === "processing") break;
    await sleep(100);
  }

  const restartsBefore = h.stack.extractorRestarts;
  const random = prng(5);
  const killed: number[] = [];
  for (let kill = 0; kill < 5; kill++) {
    const child = h.stack.children.extractor;
    const at = Date.now();
    child.kill("SIGKILL");
    killed.push(child.pid as number);
    // Every kill is followed by a restart: a new process that answers.
    const back = await h.stack.extractorReady(60_000);
    expect(back.pid).not.toBe(child.pid);
    // The next kill 2–3 s after this one (or as soon as the extractor is back, when its
    // back-off made it take longer).
    await sleep(Math.max(0, at + 2000 + random() * 1000 - Date.now()));
  }
  expect(new Set(killed).size).toBe(5);
  expect(h.stack.extractorRestarts).toBe(restartsBefore + 5);
  expect(
    h.stackLog.filter((line) => /^extractor exited \(SIGKILL\); restarting/.test(line)),
  ).toHaveLength(5);

  // None stuck: with retries at 5, 10, 20 … s every job ends.
  const finished = new Map<string, any>();
  const deadline = Date.now() + 240_000;
  while (finished.size < jobs.length && Date.now() < deadline) {
    for (const job of jobs) {
      if (finished.has(job.id)) continue;
      const read = await readJob(job.account, job.id);
      if (read.status === "completed" || read.status === "failed") finished.set(job.id, read);
    }
    await sleep(500);
  }
  const stuck = jobs.filter((j) => !finished.has(j.id)).map((j) => j.id);
  expect(stuck, `${h.stack.logTail("edge")}\n${h.stack.logTail("extractor")}`).toEqual([]);

  const expected = Array.from({ length: FRAMES }, (_, i) => {
    const t = ((i + 0.5) * VIDEO_SECONDS) / FRAMES;
    return Math.floor(t * FPS + 1e-9);
  });
  for (const job of jobs) {
    const read = finished.get(job.id);
    if (read.status === "failed") {
      expect(read.credits_charged).toBe(0);
      continue;
    }
    // 20 s is one started minute with 40 frames: 1 credit.
    expect(read.credits_charged).toBe(1);
    expect(read.frames).toHaveLength(FRAMES);
    const numbers: (number | null)[] = [];
    for (const frame of read.frames) {
      expect(frame.status).toBe("ok");
      const file = await download(frame.url);
      expect(file.status).toBe(200);
      expect(file.type).toBe("image/png");
      expect([...file.bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
      numbers.push((await readImagePattern(file.bytes)).number);
    }
    expect(numbers).toEqual(expected);
  }

  for (const [n, account] of accounts.entries()) {
    const mine = jobs.filter((j) => j.account === account).map((j) => finished.get(j.id));
    const charged = mine.reduce((sum, job) => sum + job.credits_charged, 0);
    const usage = (await call(h.stack, "GET", "/usage", { headers: account.auth })).body;
    // The balance moved by exactly the jobs' charges, and nothing is still held.
    expect(before[n].credits.available - usage.credits.available).toBe(charged);
    expect(before[n].credits.plan - usage.credits.plan).toBe(charged);
    expect(usage.this_period.credits_reserved).toBe(0);
    // The ledger says the same, one settlement per job, each its job's charge.
    const [row] = await h.query(`SELECT id FROM accounts WHERE email = '${account.email}'`);
    const ledger =
      (await h.query(`SELECT id, job_id, kind, plan_delta, pack_delta, reserved_delta FROM credit_ledger
       WHERE account_id = '${row.id}' AND job_id IS NOT NULL`)) as {
        id: string;
        job_id: string;
        kind: string;
        plan_delta: number;
        pack_delta: number;
        reserved_delta: number;
      }[];
    expect(ledger.reduce((sum, e) => sum + e.plan_delta + e.pack_delta, 0)).toBe(-charged);
    expect(ledger.reduce((sum, e) => sum + e.reserved_delta, 0)).toBe(0);
    for (const job of mine) {
      const settles = ledger.filter((e) => e.job_id === job.id && e.id.startsWith("settle:"));
      expect(settles).toHaveLength(1);
      expect(-(settles[0].plan_delta + settles[0].pack_delta)).toBe(job.credits_charged);
    }
  }
}, 600_000);
