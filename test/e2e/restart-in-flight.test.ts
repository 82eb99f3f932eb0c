// `npm start` stopped and started again in the middle of a job (issue 33). `wrangler dev` keeps
// the queue messages that keep a job going in memory, so the restart drops them; the job is left
// `processing` with a lease nobody renews. The new start fires the worker's cron (once at start,
// once the old run's leases are out, then on wrangler.toml's schedule), whose backstop hands
// the job to a new attempt: it must end, completed or failed, within a minute of the restart.
// The origin holds its answers while the first run is up (the job is in flight, reading), and
// serves the video at once after the restart. A second job is left `queued` at the stop (as a
// busy or unreachable extractor leaves one, waiting for a message the restart drops): the
// cron hands it back too (decision 0180), and it ends within the same minute.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import {
  nextCronTime,
  parseCron,
  readMaintenanceSchedule,
} from "../../scripts/lib/maintenance.mjs";
import {
  createKey,
  executeLocalD1,
  freePort,
  ROOT,
  readLocalD1,
  stackQuery,
} from "../../scripts/lib/stack.mjs";
import { fakeBin } from "../scripts/fake-bin.ts";
import { fileRoute, startTestServer } from "../sources/support/servers.ts";
import { makeTestVideo } from "../support/videos.ts";

const stateDir = mkdtempSync(join(tmpdir(), "stills-restart-in-flight-"));
let running: { child: ChildProcess; output: () => string } | undefined;

afterAll(async () => {
  if (running) await stop(running.child);
  rmSync(stateDir, { recursive: true, force: true });
});

/**
 * `npm start` as a person runs it; resolves once it says where it listens and when maintenance
 * runs. The two lines come on two pipes (stdout, stderr), so the second can arrive after the
 * first by more than a poll: a busy full run read the output between them.
 */
async function npmStart(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [join(ROOT, "scripts/start.mjs")], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (chunk) => {
    text += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    text += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (
        text.includes("Stills API listening on") &&
        text.includes("maintenance (the worker's cron)")
      ) {
        clearInterval(check);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(check);
        reject(new Error(`npm start exited ${child.exitCode}:\n${text.slice(-4000)}`));
      }
    }, 100);
  });
  return { child, output: () => text };
}

/** Ctrl-C, as a person stops it, and wait until it has. */
async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGINT");
  await exited;
}

/**
 * A job's row: through the running stack's development route, or straight from the D1 file
 * while it is stopped (no wrangler spawned either way: each spawn cost a second or two of CPU).
 */
async function jobRow(jobId: string, base: string) {
  const sql = `SELECT status, attempts, lease_expires_at FROM jobs WHERE id = '${jobId}'`;
  const secrets = JSON.parse(readFileSync(join(stateDir, "secrets.json"), "utf8"));
  const [row] = running
    ? await stackQuery({ baseUrl: base, secrets }, sql)
    : readLocalD1(sql, stateDir);
  return row as { status: string; attempts: number; lease_expires_at: string | null };
}

it("a job in flight when npm start is stopped ends within a minute of the next start", async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const bin = fakeBin();
  const env = {
    ...process.env,
    PORT: String(port),
    STILLS_STATE_DIR: stateDir,
    STILLS_ALLOW_PRIVATE_NETWORK: "1",
    // A current yt-dlp, so start-up has no reason to reach the network.
    STILLS_YTDLP: bin.add("yt-dlp-current", "echo 2026.11.01"),
    // The held origin must not end the first attempt by its minimum rate before the stop.
    EXTRACTOR_SOURCE_GRACE_SECONDS: "600",
  };

  const video = await makeTestVideo({ width: 320, height: 180, durationSeconds: 3 });
  const serveVideo = fileRoute(video, { ranges: true });
  const held: http.ServerResponse[] = [];
  let holding = true;
  const origin = await startTestServer();
  origin.route("/clip.mp4", (request, response) => {
    if (!holding) return serveVideo(request, response);
    held.push(response);
  });

  try {
    running = await npmStart(env);
    // The key through the running stack's development route (no wrangler spawned).
    const secrets = JSON.parse(readFileSync(join(stateDir, "secrets.json"), "utf8"));
    const { key } = await createKey({
      email: "in-flight@example.com",
      plan: "pro",
      stack: { baseUrl: base, secrets },
    });
    const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const created = await fetch(`${base}/v1/jobs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ url: `${origin.origin}/clip.mp4`, count: 3 }),
    });
    expect(created.status).toBe(201);
    const jobId = ((await created.json()) as { id: string }).id;
    const second = await fetch(`${base}/v1/jobs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ url: `${origin.origin}/clip.mp4`, count: 2 }),
    });
    expect(second.status).toBe(201);
    const queuedId = ((await second.json()) as { id: string }).id;
    // In flight: an attempt holds the job and the extractor is reading the source.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const job = (await (await fetch(`${base}/v1/jobs/${jobId}`, { headers: auth })).json()) as {
        status: string;
      };
      if (job.status === "processing" && held.length > 0) break;
      if (Date.now() > deadline) throw new Error(`the job never got in flight: ${job.status}`);
      await new Promise((r) => setTimeout(r, 250));
    }

    await stop(running.child);
    running = undefined;
    expect(await jobRow(jobId, base)).toMatchObject({ status: "processing", attempts: 1 });
    // The second job as a busy extractor's answer leaves it: queued, its attempt given back.
    executeLocalD1(
      `UPDATE jobs SET status = 'queued', lease_expires_at = NULL, attempts = 0
       WHERE id = '${queuedId}'`,
      stateDir,
    );
    expect(await jobRow(queuedId, base)).toMatchObject({
      status: "queued",
      lease_expires_at: null,
    });

    holding = false;
    for (const response of held) response.destroy();
    running = await npmStart(env);
    const restartedAt = Date.now();
    expect(running.output()).toMatch(
      /maintenance \(the worker's cron\): now, in \d+ s \(once the last run's leases are out\)/,
    );

    for (const id of [jobId, queuedId]) {
      let status = "processing";
      while (Date.now() - restartedAt < 60_000) {
        const read = await fetch(`${base}/v1/jobs/${id}`, { headers: auth });
        status = ((await read.json()) as { status: string }).status;
        if (status === "completed" || status === "failed") break;
        await new Promise((r) => setTimeout(r, 500));
      }
      const endedAfterMs = Date.now() - restartedAt;
      expect(
        status,
        `${id === jobId ? "in flight" : "queued"}: ${endedAfterMs} ms after the restart`,
      ).toBe("completed");
      expect(endedAfterMs).toBeLessThanOrEqual(60_000);
    }
    // A second attempt did it, and the job was charged once.
    const job = (await (await fetch(`${base}/v1/jobs/${jobId}`, { headers: auth })).json()) as {
      frames: { status: string; url: string }[];
      credits_charged: number;
    };
    expect(job.frames.map((f) => f.status)).toEqual(["ok", "ok", "ok"]);
    expect(job.credits_charged).toBe(1);
    expect((await fetch(job.frames[0].url)).status).toBe(200);
    expect((await jobRow(jobId, base)).attempts).toBe(2);
    const queued = (await (
      await fetch(`${base}/v1/jobs/${queuedId}`, { headers: auth })
    ).json()) as {
      frames: { status: string }[];
      credits_charged: number;
    };
    expect(queued.frames.map((f) => f.status)).toEqual(["ok", "ok"]);
    expect(queued.credits_charged).toBe(1);
    expect((await jobRow(queuedId, base)).attempts).toBe(1);
  } finally {
    await origin.close();
  }
}, 300_000);

it("reads the schedule as wrangler.toml says it, and stops at a cron it cannot read", () => {
  const none = join(stateDir, "none");
  const schedule = readMaintenanceSchedule({ root: ROOT, devVars: none, env: {} });
  expect(schedule).toEqual({ crons: ["*/10 * * * *"], leaseSeconds: 30 });
  // The lease the edge runs with: .dev.vars over wrangler.toml, and npm start's environment
  // (handed to the edge as a --var, which wins) over both.
  const devVars = join(stateDir, "lease.dev.vars");
  writeFileSync(devVars, "JOB_LEASE_SECONDS=45\n");
  const lease = (file: string, env: Record<string, string>) =>
    readMaintenanceSchedule({ root: ROOT, devVars: file, env }).leaseSeconds;
  expect(lease(devVars, {})).toBe(45);
  expect(lease(devVars, { JOB_LEASE_SECONDS: "60" })).toBe(60);
  expect(lease(none, { JOB_LEASE_SECONDS: "12" })).toBe(12);
  expect(lease(none, { JOB_LEASE_SECONDS: "soon" })).toBe(30);
  const at = Date.parse("2026-11-28T08:31:20Z");
  const next = (cron: string) => nextCronTime(cron, at).toISOString();
  expect(next("*/10 * * * *")).toBe("2026-11-28T08:40:00.000Z");
  expect(next("30 9 * * *")).toBe("2026-11-28T09:30:00.000Z");
  expect(next("0 0 * * SAT,SUN")).toBe("2026-11-29T00:00:00.000Z");
  expect(next("5,7 1-3/2 * JAN-MAR *")).toBe("2027-01-01T01:05:00.000Z");
  // Either day field matches when both are given, as cron has it (the 30th is a Monday).
  expect(next("15 10 1 * MON")).toBe("2026-11-30T10:15:00.000Z");
  for (const bad of ["* * * * 1", "61 * * * *", "* * *", "L * * * *", "*/0 * * * *"]) {
    expect(() => parseCron(bad), bad).toThrow(/cron/);
  }
});
