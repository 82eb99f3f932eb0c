// API benchmark: throughput and p50/p99 latency of an authenticated GET /v1/jobs/{id} (auth,
// rate limiter Durable Object and D1 together) under concurrent load on local workerd,
// against the bare /healthz route of the same worker, measured in the same run.
// Goal: the authenticated read keeps at least half of the bare route's throughput.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, startStack, wrangler } from "./lib/stack.mjs";

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const KEYS = 12; // each key has its own limiter bucket (scale: 1000/min); enough for the run

async function load(url, headersFor) {
  const latencies = [];
  let errors = 0;
  let i = 0;
  const deadline = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const res = await fetch(url, { headers: headersFor(i++) });
        await res.arrayBuffer();
        if (res.status !== 200) errors++;
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { requests: latencies.length, rps: latencies.length / SECONDS, p50: pct(0.5), p99: pct(0.99), errors };
}

const stateDir = mkdtempSync(join(tmpdir(), "stills-bench-api-"));
const stack = await startStack({ STILLS_STATE_DIR: stateDir, PORT: String(await freePort()), quiet: true });
try {
  const { issueKeyStatements, toSqlScript } = await import("../schema/accounts.ts");
  const keys = [];
  const statements = [];
  for (let k = 0; k < KEYS; k++) {
    const issued = await issueKeyStatements({ email: "bench@example.com", plan: "scale" });
    keys.push(issued.key);
    statements.push(...(k === 0 ? issued.statements : issued.statements.slice(2)));
  }
  const sqlFile = join(stateDir, "keys.sql");
  (await import("node:fs")).writeFileSync(sqlFile, toSqlScript(statements));
  const run = wrangler(["d1", "execute", "DB", "--local", "--persist-to", stateDir, "--file", sqlFile, "--yes"]);
  if (run.status !== 0) throw new Error(run.stderr);

  const created = await fetch(`${stack.apiUrl}/jobs`, {
    method: "POST",
    headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json" },
    body: JSON.stringify({ url: "https://cdn.example.com/bench.mp4", timestamps: [1] }),
  });
  const job = await created.json();
  if (created.status !== 201) throw new Error(`creating the job failed: ${JSON.stringify(job)}`);

  const jobUrl = `${stack.apiUrl}/jobs/${job.id}`;
  const auth = (i) => ({ authorization: `Bearer ${keys[i % KEYS]}` });
  // Warm both paths (isolate start, D1 and Durable Object first use) before measuring.
  await load(`${stack.baseUrl}/healthz`, () => ({}));
  await load(jobUrl, auth);
  const bare = await load(`${stack.baseUrl}/healthz`, () => ({}));
  const authed = await load(jobUrl, auth);

  const row = (name, r) =>
    `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  non-200: ${r.errors}`;
  console.log(`\nAPI (local workerd, ${CONCURRENCY} concurrent, ${SECONDS} s each)`);
  console.log(row("bare GET /healthz", bare));
  console.log(row("authenticated GET /v1/jobs/{id}", authed));
  const ratio = authed.rps / bare.rps;
  console.log(`throughput ratio authenticated ÷ bare: ${ratio.toFixed(2)} (goal ≥ 0.50) ${ratio >= 0.5 ? "MET" : "MISSED"}`);
  console.log(`p50 latency ratio authenticated ÷ bare: ${(authed.p50 / bare.p50).toFixed(2)}`);
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
