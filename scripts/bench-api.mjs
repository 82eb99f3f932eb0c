// API benchmark: throughput and p50/p99 latency of an authenticated GET /v1/jobs/{id} (auth,
// rate limiter Durable Object and D1 together) under concurrent load on local workerd,
// against the bare /healthz route of the same worker, measured in the same run.
// Goal (issue 11): the authenticated read keeps at least 0.60 of the bare route's throughput,
// in every round (bench-goals.mjs).
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reportGoal } from "./bench-goals.mjs";
import { executeLocalSql, freePort, startStack } from "./lib/stack.mjs";

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
// Bare and authenticated runs alternate in short rounds, so a change in the machine's load
// during the run falls on both sides of the ratio alike.
const ROUNDS = Math.max(5, Number(process.env.BENCH_ROUNDS ?? 5));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
// Each key has its own limiter bucket (scale: 1000 a minute): enough keys that the run measures
// the limiter's work, not its refusals.
const KEYS = 40;

async function load(url, headersFor, latencies = [], tally = { errors: 0, seconds: 0 }) {
  let i = 0;
  const deadline = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const res = await fetch(url, { headers: headersFor(i++) });
        await res.arrayBuffer();
        if (res.status !== 200) tally.errors++;
        latencies.push(performance.now() - started);
      }
    }),
  );
  tally.seconds += SECONDS;
  return { latencies, tally };
}

function summarise({ latencies, tally }) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return {
    requests: sorted.length,
    rps: sorted.length / tally.seconds,
    p50: pct(0.5),
    p99: pct(0.99),
    errors: tally.errors,
  };
}

const stateDir = mkdtempSync(join(tmpdir(), "stills-bench-api-"));
const stack = await startStack({
  STILLS_STATE_DIR: stateDir,
  PORT: String(await freePort()),
  STILLS_ALLOW_PRIVATE_NETWORK: "1",
  quiet: true,
});
// A real completed job to read: six frames of a short clip served from loopback.
const clip = join(stateDir, "clip.mp4");
execFileSync("ffmpeg", [
  "-v",
  "error",
  "-f",
  "lavfi",
  "-i",
  "testsrc2=size=320x180:rate=30:duration=4",
  "-pix_fmt",
  "yuv420p",
  clip,
]);
const clipBytes = readFileSync(clip);
const clipServer = createServer((req, res) => {
  res
    .writeHead(200, { "content-type": "video/mp4", "content-length": clipBytes.length })
    .end(clipBytes);
}).listen(0, "127.0.0.1");
await once(clipServer, "listening");
try {
  const { issueKeyStatements, toSqlScript } = await import("../schema/accounts.ts");
  const keys = [];
  const statements = [];
  for (let k = 0; k < KEYS; k++) {
    const issued = await issueKeyStatements({ email: "bench@example.com", plan: "scale" });
    keys.push(issued.key);
    statements.push(...(k === 0 ? issued.statements : issued.statements.slice(2)));
  }
  executeLocalSql(toSqlScript(statements), stateDir);

  const created = await fetch(`${stack.apiUrl}/jobs`, {
    method: "POST",
    headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json" },
    body: JSON.stringify({
      url: `http://127.0.0.1:${clipServer.address().port}/clip.mp4`,
      count: 6,
      wait: true,
    }),
  });
  const job = await created.json();
  if (created.status !== 201 || job.status !== "completed") {
    throw new Error(`the job to read did not complete: ${JSON.stringify(job)}`);
  }

  const jobUrl = `${stack.apiUrl}/jobs/${job.id}`;
  const auth = (i) => ({ authorization: `Bearer ${keys[i % KEYS]}` });
  // Warm both paths (isolate start, D1 and Durable Object first use) before measuring.
  await load(`${stack.baseUrl}/healthz`, () => ({}));
  await load(jobUrl, auth);
  const bareRuns = { latencies: [], tally: { errors: 0, seconds: 0 } };
  const authedRuns = { latencies: [], tally: { errors: 0, seconds: 0 } };
  const roundRatios = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bareBefore = bareRuns.latencies.length;
    const authedBefore = authedRuns.latencies.length;
    await load(`${stack.baseUrl}/healthz`, () => ({}), bareRuns.latencies, bareRuns.tally);
    await load(jobUrl, auth, authedRuns.latencies, authedRuns.tally);
    // Both runs last SECONDS, so the ratio of their request counts is the throughput ratio.
    roundRatios.push(
      (authedRuns.latencies.length - authedBefore) / (bareRuns.latencies.length - bareBefore),
    );
  }
  const bare = summarise(bareRuns);
  const authed = summarise(authedRuns);

  const row = (name, r) =>
    `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  non-200: ${r.errors}`;
  console.log(
    `\nAPI (local workerd, ${CONCURRENCY} concurrent, ${ROUNDS} alternating rounds of ${SECONDS} s each)`,
  );
  console.log(`reading a completed job with ${job.frames.length} signed frame URLs`);
  console.log(row("bare GET /healthz", bare));
  console.log(row("authenticated GET /v1/jobs/{id}", authed));
  const met = reportGoal("throughput, authenticated read ÷ bare route", roundRatios, {
    goal: "≥ 0.60",
    meets: (v) => v >= 0.6,
  });
  process.exitCode = met ? 0 : 1;
  console.log(`p50 latency ratio authenticated ÷ bare: ${(authed.p50 / bare.p50).toFixed(2)}`);
} finally {
  clipServer.close();
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
