// Extractor benchmark: `node scripts/bench-extract.mjs`. Sources are generated once into
// bench/out/ (gitignored). Each job runs as its own `node extractor/cli.ts` process, exactly as
// the service would run it, and is compared with plain ffmpeg on the same file in the same run:
//   1. dense (every 0.5 s) ÷ `ffmpeg -i SRC -f null -`                       goal ≤ 1.3
//   2. sparse (every 10 s; 12 exact timestamps) ÷ `ffmpeg -i SRC -vf fps=1/10 out%03d.jpg`
//                                                                           goal ≤ 0.25
//   3. peak RSS of the extractor process plus its ffmpeg children on a 2160p source
//                                                                           goal < 500 MB
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";

const OUT = "bench/out";
// The extractor needs Node 22 (type stripping); the project installs it in node_modules/.bin,
// while a plain `node` on the machine may be older.
const LOCAL_NODE = "node_modules/.bin/node";
const NODE = existsSync(LOCAL_NODE) ? LOCAL_NODE : process.execPath;

function generate(path, size, seconds, extra) {
  if (existsSync(path)) return Promise.resolve();
  console.log(`generating ${path} (once)…`);
  const tmp = `${path}.tmp.mp4`;
  return runChild("ffmpeg", [
    "-hide_banner",
    "-loglevel",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=${size}:rate=30:duration=${seconds}`,
    "-c:v",
    "libx264",
    "-g",
    "60",
    "-keyint_min",
    "60",
    "-sc_threshold",
    "0",
    "-pix_fmt",
    "yuv420p",
    ...extra,
    tmp,
  ]).then(() => rename(tmp, path));
}

/** Runs a command; resolves with its wall time (s), stdout and peak RSS of its process tree. */
function runChild(command, args, { sampleMemory = false } = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
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

/**
 * RSS of a process and all its descendants (Linux /proc). Walks only the tree, through each
 * thread's children list: scanning all of /proc every few ms would itself cost CPU and skew
 * the timings measured alongside.
 */
async function treeRssKb(pid) {
  let total = 0;
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const children = await readFile(`/proc/${pid}/task/${tid}/children`, "utf8");
      for (const child of children.split(" ").filter(Boolean))
        total += await treeRssKb(Number(child));
    }
  } catch {
    // The process ended while we looked.
  }
  return total;
}

async function job(source, options, name, { strategy = "auto", sampleMemory = false } = {}) {
  const dir = join(OUT, `frames-${name}`);
  await rm(dir, { recursive: true, force: true });
  const result = await runChild(
    NODE,
    ["extractor/cli.ts", source, JSON.stringify(options), dir, strategy],
    { sampleMemory },
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

/** The median run of a short job: one run of a 1–2 s job is at the mercy of the machine. */
async function medianJob(runs, ...args) {
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await job(...args));
  results.sort((a, b) => a.jobSeconds - b.jobSeconds);
  return results[Math.floor(runs / 2)];
}

async function main() {
  await mkdir(OUT, { recursive: true });
  const fullHd = join(OUT, "src-1080p30-120s.mp4");
  const uhd = join(OUT, "src-2160p30-20s.mp4");
  await generate(fullHd, "1920x1080", 120, ["-preset", "veryfast"]);
  await generate(uhd, "3840x2160", 20, ["-preset", "ultrafast"]);

  console.log("measuring (2 cores; the short sparse jobs are the median of 3 runs)…");
  const nullDecode = await runChild("ffmpeg", [
    "-hide_banner",
    "-loglevel",
    "error",
    "-i",
    fullHd,
    "-f",
    "null",
    "-",
  ]);
  const dense = await job(fullHd, { mode: "interval", every: 0.5 }, "dense");

  const fpsDir = join(OUT, "fps-baseline");
  await rm(fpsDir, { recursive: true, force: true });
  await mkdir(fpsDir, { recursive: true });
  const fpsBaseline = await runChild("ffmpeg", [
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
  const sparseInterval = await medianJob(
    3,
    fullHd,
    { mode: "interval", every: 10 },
    "sparse-interval",
  );
  const timestamps = [
    3.21, 12.7, 21.05, 33.333, 41.9, 50.5, 61.01, 72.8, 83.4, 95.95, 104.2, 117.6,
  ];
  const sparseTimestamps = await medianJob(
    3,
    fullHd,
    { mode: "timestamps", timestamps },
    "sparse-timestamps",
  );

  const memory = await job(
    uhd,
    { mode: "interval", every: 0.5, resolution: 2160, format: "png", output: "both" },
    "memory-2160p",
    { sampleMemory: true },
  );

  const rows = [
    ["dense every 0.5 s (240 frames)", dense, nullDecode, "ffmpeg -f null", "≤ 1.3"],
    [
      "sparse every 10 s (12 frames, median of 3)",
      sparseInterval,
      fpsBaseline,
      "fps=1/10 jpgs",
      "≤ 0.25",
    ],
    [
      "sparse 12 timestamps (median of 3)",
      sparseTimestamps,
      fpsBaseline,
      "fps=1/10 jpgs",
      "≤ 0.25",
    ],
  ];
  console.log(
    "\n| job (1920×1080 30 fps, 120 s, GOP 2 s) | job s | process s | baseline s | baseline | ratio (job) | ratio (process) | goal |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const [name, run, base, what, goal] of rows) {
    console.log(
      `| ${name} | ${run.jobSeconds.toFixed(2)} | ${run.seconds.toFixed(2)} | ${base.seconds.toFixed(2)} | ${what} | ${(run.jobSeconds / base.seconds).toFixed(2)} | ${(run.seconds / base.seconds).toFixed(2)} | ${goal} |`,
    );
  }
  console.log(
    "job s: the job itself, as the long-running service spends it; process s adds Node's start-up.",
  );
  console.log(`\n| memory (3840×2160 source, every 0.5 s, PNG at 2160p, ZIP) | peak RSS | goal |`);
  console.log("|---|---|---|");
  console.log(
    `| extractor + ffmpeg children, ${memory.frames} frames | ${memory.peakMb.toFixed(0)} MB | < 500 MB |`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
