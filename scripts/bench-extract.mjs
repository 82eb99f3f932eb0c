// Extractor benchmark: `node scripts/bench-extract.mjs`. Sources are generated once into
// bench/out/ (gitignored). Each job runs as its own process of the extractor's bundled CLI
// (dist/extractor/cli.mjs, scripts/build-extractor.mjs), exactly as the service would run it, right after its baseline (plain ffmpeg on the same file), in
// ROUNDS rounds; a goal is MET only if every round meets it (bench-goals.mjs):
//   1. dense (every 0.5 s) ÷ `ffmpeg -i SRC -f null -`                       goal ≤ 1.10
//   2. sparse (every 10 s; 12 exact timestamps) ÷ `ffmpeg -i SRC -vf fps=1/10 out%03d.jpg`
//                                                                           goal ≤ 0.25
//   3. peak RSS of the extractor process plus its ffmpeg children on a 2160p source, PNG at
//      2160p with ZIP                                                       goal < 300 MB
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { generateVideo, median, ROUNDS, reportGoal, treeRssKb } from "./bench-goals.mjs";
import { buildExtractor, EXTRACTOR_CLI } from "./build-extractor.mjs";
import { extractorMallocEnv } from "./lib/stack.mjs";

const OUT = "bench/out";
// The extractor needs Node 22; the project installs it in node_modules/.bin, while a plain
// `node` on the machine may be older.
const LOCAL_NODE = "node_modules/.bin/node";
const NODE = existsSync(LOCAL_NODE) ? LOCAL_NODE : process.execPath;

function runChild(command, args, { sampleMemory = false, extractor = false } = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    // The extractor as the image runs it (extractor/Dockerfile; npm start does the same). The
    // baselines' ffmpeg as a user runs it: without our malloc settings (decision 0374).
    const env = extractor ? { ...process.env, ...extractorMallocEnv() } : process.env;
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
    let peakKb = 0;
    const timer = sampleMemory
      ? setInterval(async () => {
          peakKb = Math.max(peakKb, await treeRssKb(child.pid));
        }, 20)
      : null;
    child.on("close", (code) => {
      if (timer) clearInterval(timer);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) reject(new Error(`${command} exited ${code}: ${stderr}`));
      else resolve({ seconds, stdout, stderr, peakMb: peakKb / 1024 });
    });
  });
}

async function job(source, options, name, { strategy = "auto", sampleMemory = false } = {}) {
  const dir = join(OUT, `frames-${name}`);
  await rm(dir, { recursive: true, force: true });
  const result = await runChild(
    NODE,
    [EXTRACTOR_CLI, source, JSON.stringify(options), dir, strategy],
    { sampleMemory, extractor: true },
  );
  const outcome = JSON.parse(result.stdout.trim().split("\n").pop());
  const ok = outcome.frames.filter((f) => f.status === "ok").length;
  if (outcome.status !== "completed" || ok !== outcome.frames.length) {
    throw new Error(
      `${name}: ${ok} of ${outcome.frames.length} frames, ${JSON.stringify(outcome.error)}`,
    );
  }
  await rm(dir, { recursive: true, force: true });
  // The job's own time, as the service spends it; `seconds` also holds Node's start-up.
  const jobSeconds = Number(/job_seconds=([\d.]+)/.exec(result.stderr)?.[1] ?? result.seconds);
  return { ...result, jobSeconds, frames: ok };
}

async function main() {
  await mkdir(OUT, { recursive: true });
  await buildExtractor();
  const fullHd = join(OUT, "src-1080p30-120s.mp4");
  const uhd = join(OUT, "src-2160p30-20s.mp4");
  await generateVideo(fullHd, { size: "1920x1080", seconds: 120, extra: ["-preset", "veryfast"] });
  await generateVideo(uhd, { size: "3840x2160", seconds: 20, extra: ["-preset", "ultrafast"] });

  const fpsDir = join(OUT, "fps-baseline");
  const fpsPass = async () => {
    await rm(fpsDir, { recursive: true, force: true });
    await mkdir(fpsDir, { recursive: true });
    const pass = await runChild("ffmpeg", [
      "-hide_banner",
      "-loglevel",
      "error",
      "-i",
      fullHd,
      "-vf",
      "fps=1/10",
      join(fpsDir, "out%03d.jpg"),
    ]);
    await rm(fpsDir, { recursive: true, force: true });
    return pass;
  };
  const nullDecode = () =>
    runChild("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", fullHd, "-f", "null", "-"]);
  const timestamps = [
    3.21, 12.7, 21.05, 33.333, 41.9, 50.5, 61.01, 72.8, 83.4, 95.95, 104.2, 117.6,
  ];

  console.log(`measuring ${ROUNDS} rounds; in each, every job right after its baseline (2 cores)…`);
  const dense = [];
  const sparseInterval = [];
  const sparseTimestamps = [];
  const memory = [];
  for (let round = 0; round < ROUNDS; round++) {
    const raw = await nullDecode();
    const denseJob = await job(fullHd, { mode: "interval", every: 0.5 }, "dense");
    dense.push({ job: denseJob, base: raw });
    const fps = await fpsPass();
    const interval = await job(fullHd, { mode: "interval", every: 10 }, "sparse-interval");
    const exact = await job(fullHd, { mode: "timestamps", timestamps }, "sparse-timestamps");
    sparseInterval.push({ job: interval, base: fps });
    sparseTimestamps.push({ job: exact, base: fps });
    // Peak memory does not grow with length (frames stream through): 10 s keep rounds short.
    const uhdJob = await job(
      uhd,
      { mode: "interval", every: 0.5, end: 10, resolution: 2160, format: "png", output: "both" },
      "memory-2160p",
      { sampleMemory: true },
    );
    memory.push(uhdJob.peakMb);
  }

  const seconds = (runs, pick) => median(runs.map(pick)).toFixed(2);
  const table = [
    ["dense every 0.5 s (240 frames)", dense, "ffmpeg -f null"],
    ["sparse every 10 s (12 frames)", sparseInterval, "fps=1/10 jpgs"],
    ["sparse 12 exact timestamps", sparseTimestamps, "fps=1/10 jpgs"],
  ];
  console.log(
    "\n| job (1920×1080 30 fps, 120 s, GOP 2 s), medians | job s | process s | baseline s | baseline |",
  );
  console.log("|---|---|---|---|---|");
  for (const [name, runs, what] of table) {
    console.log(
      `| ${name} | ${seconds(runs, (r) => r.job.jobSeconds)} | ${seconds(runs, (r) => r.job.seconds)} | ${seconds(runs, (r) => r.base.seconds)} | ${what} |`,
    );
  }
  console.log(
    "job s: the job itself, as the long-running service spends it; process s adds Node's start-up.\n",
  );
  const ratios = (runs) => runs.map((r) => r.job.jobSeconds / r.base.seconds);
  const met = [
    reportGoal("dense every 0.5 s ÷ raw decode", ratios(dense), {
      goal: "≤ 1.10",
      meets: (v) => v <= 1.1,
    }),
    reportGoal("sparse every 10 s ÷ fps=1/10 pass", ratios(sparseInterval), {
      goal: "≤ 0.25",
      meets: (v) => v <= 0.25,
    }),
    reportGoal("sparse 12 timestamps ÷ fps=1/10 pass", ratios(sparseTimestamps), {
      goal: "≤ 0.25",
      meets: (v) => v <= 0.25,
    }),
    reportGoal("peak RSS, extractor + ffmpeg, 3840×2160 PNG at 2160p with ZIP", memory, {
      goal: "< 300 MB",
      meets: (v) => v < 300,
      digits: 0,
      unit: " MB",
    }),
  ];
  if (!met.every(Boolean)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
