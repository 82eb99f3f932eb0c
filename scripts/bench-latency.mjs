// Latency (issue 11): what the API adds around the extractor's own work. A full job through
// the API on the local stack (6 frames of a 12 s 720p clip served from 127.0.0.1, wait=true),
// timed from this process, minus the extractor's own job time from its "job finished" log line.
//   goal: wait=true answer − extractor job time ≤ 0.25 s. MET only if every round meets it.
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  generateVideo,
  ROUNDS,
  reportGoal,
  serveFile,
  waitForJobFinished,
} from "./bench-goals.mjs";
import { createKey, startBenchStack } from "./lib/stack.mjs";

const OUT = join(import.meta.dirname, "..", "bench", "out");
const SOURCE = join(OUT, "latency-12s-720p30.mp4");

await mkdir(OUT, { recursive: true });
await generateVideo(SOURCE, { size: "1280x720", seconds: 12, extra: ["-preset", "veryfast"] });

const origin = await serveFile(SOURCE);
const stateDir = mkdtempSync(join(tmpdir(), "stills-bench-latency-"));
const stack = await startBenchStack(stateDir);

async function apiJob(key) {
  const started = performance.now();
  const response = await fetch(`${stack.apiUrl}/jobs`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ url: origin.url, count: 6, wait: true }),
  });
  const job = await response.json();
  const seconds = (performance.now() - started) / 1000;
  if (response.status !== 201 || job.status !== "completed") {
    throw new Error(`the job did not complete: ${response.status} ${JSON.stringify(job)}`);
  }
  if (job.frames.filter((f) => f.status === "ok").length !== 6) throw new Error("frames missing");
  const finished = await waitForJobFinished(stack, job.id);
  if (!finished) throw new Error(`no "job finished" line for ${job.id}`);
  return { seconds, extractorSeconds: finished.seconds };
}

let met = false;
try {
  const { key } = await createKey({ email: "bench-latency@example.com", plan: "scale", stateDir });
  await apiJob(key); // warm the isolate, D1, the queue and the extractor
  const rounds = [];
  for (let round = 0; round < Math.max(ROUNDS, 7); round++) rounds.push(await apiJob(key));
  for (const [i, r] of rounds.entries()) {
    console.log(
      `round ${i + 1}: wait=true answer ${r.seconds.toFixed(3)} s, extractor job ` +
        `${r.extractorSeconds.toFixed(3)} s, added ${(r.seconds - r.extractorSeconds).toFixed(3)} s`,
    );
  }
  met = reportGoal(
    "wait=true answer − extractor job time (6 frames, 12 s 720p)",
    rounds.map((r) => r.seconds - r.extractorSeconds),
    { goal: "≤ +0.25 s", meets: (v) => v <= 0.25, digits: 3, unit: " s" },
  );
} finally {
  await stack.stop();
  await origin.close();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exitCode = met ? 0 : 1;
