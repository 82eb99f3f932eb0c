// API benchmark: throughput and p50/p99 latency of an authenticated GET /v1/jobs/{id} of a
// completed job (the key's check and its rate limiter's lease, the job as the edge remembers a
// settled one) under concurrent load on local workerd, against the bare /healthz route of the
// same worker, measured in the same run. Beside it, not a goal: the same read of a failed job,
// which the edge reads from D1 every time, as it does a job still running.
// Goal (issue 11): the authenticated read keeps at least 0.60 of the bare route's throughput,
// in every round (bench-goals.mjs).
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, reportGoal } from "./bench-goals.mjs";
import { executeLocalSql, startBenchStack } from "./lib/stack.mjs";

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Math.max(5, Number(process.env.BENCH_ROUNDS ?? 5));
// Seconds of each route per round. Each round interleaves the two routes in SLICES slices per
// route, in the order bare-authed-authed-bare…, so a burst of other work on this machine (the
// extractor's benchmarks share its two cores) falls on both sides of a round's ratio alike
// instead of on one 2-second half.
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const SLICES = 4;
// Each key has its own limiter bucket (scale: 1000 a minute): enough keys that the run measures
// the limiter's work, not its refusals.
const KEYS = 40;

/**
 * Requests for `seconds` at CONCURRENCY. Requests started before the deadline are counted and
 * the time they take to finish is counted too, so a slower route gains nothing from the drain.
 */
async function load(url, headersFor, seconds, run = { latencies: [], errors: 0, seconds: 0 }) {
  let i = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        const res = await fetch(url, { headers: headersFor(i++) });
        await res.arrayBuffer();
        if (res.status !== 200) run.errors++;
        run.latencies.push(performance.now() - sent);
      }
    }),
  );
  run.seconds += (performance.now() - started) / 1000;
  return run;
}

/** One round: every route for SECONDS each, interleaved; answers each route's requests/s. */
async function round(runs) {
  const before = runs.map((run) => [run.latencies.length, run.seconds]);
  for (let slice = 0; slice < SLICES; slice++) {
    const steps = runs.map((run) => () => load(run.url, run.headersFor, SECONDS / SLICES, run));
    for (const step of slice % 2 ? steps.reverse() : steps) await step();
  }
  return runs.map((run, i) => (run.latencies.length - before[i][0]) / (run.seconds - before[i][1]));
}

function summarise({ latencies, seconds, errors }) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return {
    requests: sorted.length,
    rps: sorted.length / seconds,
    p50: pct(0.5),
    p99: pct(0.99),
    errors,
  };
}

const stateDir = mkdtempSync(join(tmpdir(), "stills-bench-api-"));
const stack = await startBenchStack(stateDir);
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
  if (req.url !== "/clip.mp4") return res.writeHead(404).end();
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

  const createJob = async (path) => {
    const created = await fetch(`${stack.apiUrl}/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json" },
      body: JSON.stringify({
        url: `http://127.0.0.1:${clipServer.address().port}${path}`,
        count: 6,
        wait: true,
      }),
    });
    return { status: created.status, job: await created.json() };
  };
  const { status, job } = await createJob("/clip.mp4");
  if (status !== 201 || job.status !== "completed") {
    throw new Error(`the job to read did not complete: ${JSON.stringify(job)}`);
  }
  // A failed job is never remembered by the edge (edge/jobs/read.ts): every read of it is the
  // D1 statement a job still running costs. Printed beside the goal, not part of it.
  const missing = await createJob("/missing.mp4");
  if (missing.job.status !== "failed") {
    throw new Error(`the job meant to fail did not: ${JSON.stringify(missing.job)}`);
  }

  const auth = (i) => ({ authorization: `Bearer ${keys[i % KEYS]}` });
  const newRun = (url, headersFor) => ({ url, headersFor, latencies: [], errors: 0, seconds: 0 });
  const newRuns = () => [
    newRun(`${stack.baseUrl}/healthz`, () => ({})),
    newRun(`${stack.apiUrl}/jobs/${job.id}`, auth),
    newRun(`${stack.apiUrl}/jobs/${missing.job.id}`, auth),
  ];
  // A round not counted warms every path (isolate start, D1 and Durable Object first use, the
  // limiter's leases) before measuring.
  await round(newRuns());
  const [bareRuns, authedRuns, uncachedRuns] = newRuns();
  const roundRatios = [];
  const uncachedRatios = [];
  for (let r = 0; r < ROUNDS; r++) {
    const [bareRate, authedRate, uncachedRate] = await round([bareRuns, authedRuns, uncachedRuns]);
    roundRatios.push(authedRate / bareRate);
    uncachedRatios.push(uncachedRate / bareRate);
  }
  const bare = summarise(bareRuns);
  const authed = summarise(authedRuns);
  const uncached = summarise(uncachedRuns);

  const row = (name, r) =>
    `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  non-200: ${r.errors}`;
  console.log(
    `\nAPI (local workerd, ${CONCURRENCY} concurrent, ${ROUNDS} rounds of ${SECONDS} s per route, ` +
      `interleaved in ${SLICES} slices each, after one round not counted)`,
  );
  console.log(`reading a completed job with ${job.frames.length} signed frame URLs`);
  console.log(row("bare GET /healthz", bare));
  console.log(row("authenticated GET /v1/jobs/{id}", authed));
  console.log(row("same, a failed job (from D1)", uncached));
  const met = reportGoal("throughput, authenticated read ÷ bare route", roundRatios, {
    goal: "≥ 0.60",
    meets: (v) => v >= 0.6,
  });
  process.exitCode = met ? 0 : 1;
  console.log(
    `not a goal: a job read from D1 (not settled, or failed) ÷ bare route: median ${median(uncachedRatios).toFixed(2)} ` +
      `(spread ${Math.min(...uncachedRatios).toFixed(2)}–${Math.max(...uncachedRatios).toFixed(2)})`,
  );
  console.log(`p50 latency ratio authenticated ÷ bare: ${(authed.p50 / bare.p50).toFixed(2)}`);
} finally {
  clipServer.close();
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
