// Sparse extraction over HTTP (issue 11): 12 exact timestamps of a 5-minute 1080p30 H.264 file
// (GOP 2 s), served with ranges from 127.0.0.1, taken through the API on the local stack with
// wait=true. Each round times the job against `ffmpeg -i FILE -vf fps=1/25 -f null -` on the
// same file, the mean of the passes run just before and just after it, and counts the bytes
// the origin itself sent for the job. The stack is warmed with a few jobs first.
//   goals: API job ÷ fps pass ≤ 0.125 (issue 11) and ≤ 0.075 (issue 41, the current one); bytes
//   sent ÷ file size ≤ 10 %. MET only if every round.
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  generateVideo,
  median,
  ROUNDS,
  reportGoal,
  runTimed,
  serveFile,
  waitForJobFinished,
} from "./bench-goals.mjs";
import { createKey, startBenchStack } from "./lib/stack.mjs";

const OUT = join(import.meta.dirname, "..", "bench", "out");
const SOURCE = join(OUT, "http-5min-1080p30.mp4");
// Mid-GOP on purpose: each needs up to 2 s of decoding from its keyframe.
const TIMESTAMPS = [
  13.7, 37.3, 61.1, 84.9, 108.4, 131.05, 155.5, 179.3, 203.9, 227.2, 251.6, 276.8,
];
const FRAME_SECONDS = 1 / 30;
const WARM_UP_JOBS = 4;

await mkdir(OUT, { recursive: true });
// CBR with filler keeps the byte count realistic for a 1080p upload (testsrc2 alone compresses
// to almost nothing); faststart, as files served for the web are.
await generateVideo(SOURCE, {
  size: "1920x1080",
  seconds: 300,
  extra: [
    "-preset",
    "ultrafast",
    "-b:v",
    "3M",
    "-minrate",
    "3M",
    "-maxrate",
    "3M",
    "-bufsize",
    "3M",
    "-x264-params",
    "nal-hrd=cbr:force-cfr=1",
    "-movflags",
    "+faststart",
  ],
});

const origin = await serveFile(SOURCE);
const stateDir = mkdtempSync(join(tmpdir(), "stills-bench-http-"));
const stack = await startBenchStack(stateDir);

/** One job through the API; checks every frame is the one on screen at its time. */
async function apiJob(key) {
  const sentBefore = origin.sent();
  const started = performance.now();
  const response = await fetch(`${stack.apiUrl}/jobs`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ url: origin.url, timestamps: TIMESTAMPS, wait: true }),
  });
  const job = await response.json();
  const seconds = (performance.now() - started) / 1000;
  if (response.status !== 201 || job.status !== "completed") {
    throw new Error(`the job did not complete: ${response.status} ${JSON.stringify(job)}`);
  }
  for (const frame of job.frames) {
    const lag = frame.timestamp - frame.pts;
    if (frame.status !== "ok" || !(lag >= -1e-6 && lag < FRAME_SECONDS + 1e-6)) {
      throw new Error(`frame ${frame.index} is not the one shown at ${frame.timestamp}`);
    }
  }
  if (job.frames.length !== TIMESTAMPS.length) throw new Error("frames missing");
  const finished = await waitForJobFinished(stack, job.id);
  return {
    seconds,
    extractorSeconds: finished?.seconds ?? null,
    bytes: origin.sent() - sentBefore,
  };
}

function fpsPass() {
  return runTimed("ffmpeg", [
    "-hide_banner",
    "-loglevel",
    "error",
    "-i",
    SOURCE,
    "-vf",
    "fps=1/25",
    "-f",
    "null",
    "-",
  ]);
}

let allMet = false;
try {
  const { key } = await createKey({ email: "bench-http@example.com", plan: "scale", stateDir });
  console.log(
    `${(origin.size / 1024 ** 2).toFixed(1)} MiB, 300 s 1920×1080 30 fps, GOP 2 s; ` +
      `${TIMESTAMPS.length} timestamps; ${ROUNDS} rounds (each API job between two fps passes)`,
  );
  // Warm the stack before measuring: the first jobs of a fresh stack run slower while V8
  // optimizes the code they take, in the extractor's Node and in workerd (measured 2026-11-27:
  // jobs 2–4 after a start 10–30 % slower than the ones after them, so one warm-up job left
  // the first measured rounds on code still warming). The goal is the speed of a running
  // service; the warm-up jobs are printed, not hidden.
  const warmUp = [];
  for (let job = 0; job < WARM_UP_JOBS; job++) warmUp.push((await apiJob(key)).seconds);
  console.log(
    `warm-up jobs (not measured): ${warmUp.map((s) => s.toFixed(2)).join(" ")} s, the first on a cold stack`,
  );
  const ratios = [];
  const byteShares = [];
  const rows = [];
  // Each job is set against the fps passes just before and just after it (their mean): the
  // machine's speed drifts within a run (passes of 9.2 to 12.9 s in one run, 2026-11-27), and
  // a 1-second job set against only the 10-second pass before it took that drift for its own.
  let before = (await fpsPass()).seconds;
  for (let round = 0; round < ROUNDS; round++) {
    const job = await apiJob(key);
    const after = (await fpsPass()).seconds;
    const base = (before + after) / 2;
    ratios.push(job.seconds / base);
    byteShares.push((100 * job.bytes) / origin.size);
    rows.push({ base, before, after, ...job });
    before = after;
  }
  const fmt = (v) => (v === null ? "?" : v.toFixed(2));
  for (const [i, r] of rows.entries()) {
    console.log(
      `round ${i + 1}: API ${fmt(r.seconds)} s (extractor ${fmt(r.extractorSeconds)} s), ` +
        `fps passes ${fmt(r.before)} and ${fmt(r.after)} s, ` +
        `${(r.bytes / 1024 ** 2).toFixed(1)} MiB sent`,
    );
  }
  console.log(
    `medians: API ${median(rows.map((r) => r.seconds)).toFixed(2)} s, fps pass (mean of two) ` +
      `${median(rows.map((r) => r.base)).toFixed(2)} s`,
  );
  // For reading the API figure: how much of it is the extractor's own work (no goal).
  const own = rows.filter((r) => r.extractorSeconds !== null);
  if (own.length > 0) {
    const shares = own.map((r) => r.extractorSeconds / r.base);
    console.log(
      `the extractor's own job time ÷ fps pass: median ${median(shares).toFixed(3)} ` +
        `(${shares.map((v) => v.toFixed(3)).join(" ")}), for reading the API figure`,
    );
  }
  const fast = reportGoal("12 timestamps through the API ÷ fps=1/25 pass", ratios, {
    goal: "≤ 0.125",
    meets: (v) => v <= 0.125,
    digits: 3,
  });
  const lean = reportGoal("bytes sent by the origin ÷ file size", byteShares, {
    goal: "≤ 10 %",
    meets: (v) => v <= 10,
    digits: 1,
    unit: " %",
  });
  // Issue 41's goal for the same ratio (one sparse job nearer the floor): the one to meet now.
  const nearFloor = reportGoal("issue 41: one sparse job through the API ÷ fps=1/25 pass", ratios, {
    goal: "≤ 0.075",
    meets: (v) => v <= 0.075,
    digits: 3,
  });
  allMet = fast && lean && nearFloor;
} finally {
  await stack.stop();
  await origin.close();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exitCode = allMet ? 0 : 1;
