// Load (issue 41): many jobs at once through the whole local stack, against the same frames made
// by hand in the same round. The bench's own origin serves generated files over HTTP with
// ranges from 127.0.0.1. Each round (default 3, `--rounds N`) runs, in order:
//   1. solo: jobs of each kind alone, one at a time; the median of SOLO_RUNS (each with its own
//      moments) is the latency the loaded ones are set against (one 0.4 s job alone varied by
//      ±20 % between rounds);
//   2. mixed: four accounts submit at once 8 sparse jobs (12 timestamps of a 5-minute 1080p
//      file), 8 count-6 jobs (1-minute 720p), 8 timestamps-3 jobs (30-second 480p) and 4 dense
//      jobs (every 0.5 s over 30 s of 720p), two of each kind and one dense per account;
//   3. ten: one account posts 10 sparse jobs at once;
//   4. fairness: account A posts 30 jobs of 6 timestamps (1-minute 720p) at once, then account
//      B one count-6 job (on files of its own); B's latency against the median of B's jobs
//      alone just before. The scale plan lets A have 25 jobs in flight (max_active_jobs); A
//      posts the 5 refused again as its jobs finish, as a client with a queue would.
//      The reads: an authenticated GET /v1/jobs/{id} (a completed job) from 4 clients. Once
//      B's job is back they run for up to 10 s while A's jobs still run, against the same reads
//      on the idle stack for 5 s just before A posts and 5 s once A's jobs are all done (their
//      mean). On this machine one idle 3-s window read 245 to 443 requests/s against the next,
//      and the idle figure drifted by up to 1.7× over a minute, so the idle figure is taken on
//      both sides of the loaded one, and each window is longer than the 3 s it was.
// The mixed and ten workloads each alternate with their baseline (which goes first flips per
// round): the same frames, made the way a careful user scripts them, two ffmpeg at a time (the
// cores): one `ffmpeg -ss T -i URL -frames:v 1` per frame, one `-vf fps=2` pass per dense job
// (dense passes first, the longest tasks, which favours the baseline).
// No job repeats another's work: every job draws its own moments (seeded, so every run asks
// for the same frames; scripts/lib/load-jobs.mjs), count-6 and dense jobs their own ranges,
// and within one workload each 720p and 480p job has its own copy of the file (a remux, same
// pictures, other bytes, own URL). The sparse jobs share the one 1080p file and URL, as a
// customer's batch on one video would; their moments rarely fall in one GOP.
// Every job's frames are checked (count, each timestamp as the API reports it, the picture's
// pts), its charge against the published rules, one frame per job fetched and checked as a JPEG,
// and each account's balance against the sum of its charges and its ledger. A wrong result is
// printed and fails the bench, and its phase's figures are not counted.
// The reads' own load is kept out of the timed workloads (they share the two cores): they run
// while A's queue keeps the extractor busy. Memory is sampled every 100 ms from /proc: the
// extractor's process tree and workerd. The sparse-over-HTTP ratio is bench-http.mjs's, run
// after the rounds (`--skip-http` leaves it out). MET only if every round meets a goal.
// The stack's state (local D1, R2, Durable Objects) lives in /dev/shm, production's storage
// being services on other machines (decision 0289); `--state-on-disk` puts it on the disk.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { generateVideo, median, reportGoal, runTimed, serveFile } from "./bench-goals.mjs";
import { loadClient } from "./lib/load-client.mjs";
import { byHand, jobProblems, KINDS, seededRandom } from "./lib/load-jobs.mjs";
import { startBenchStack } from "./lib/stack.mjs";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    "skip-http": { type: "boolean" },
    // Only these phases (`--only mixed,fairness`), while exploring; their goals alone are
    // reported. Solo runs when mixed or ten does (their latencies are set against it).
    only: { type: "string" },
    // The stack's state (local D1, R2, Durable Objects) on the disk instead of in memory, as
    // before decision 0289, to compare.
    "state-on-disk": { type: "boolean" },
  },
});
const ROUNDS = Math.max(1, Number(flags.rounds) || 3);
const PHASES = ["mixed", "ten", "fairness"];
const only = flags.only ? new Set(flags.only.split(",").map((p) => p.trim())) : new Set(PHASES);
for (const p of only) {
  if (!PHASES.includes(p))
    throw new Error(`--only: no phase "${p}" (phases: ${PHASES.join(", ")})`);
}
const runs = (phase) => only.has(phase);
const OUT = join(import.meta.dirname, "..", "bench", "out");
const SPARSE_SOURCE = join(OUT, "http-5min-1080p30.mp4");
const HD_COPIES = 12;
const SD_COPIES = 8;
const READ_KEYS = 20;
const IDLE_READ_SECONDS = 5;
const LOADED_READ_SECONDS = 10;
const A_JOBS = 30;
const SOLO_RUNS = 3;
const JOB_DEADLINE_MS = 300_000;
const now = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- sources, generated once into bench/out (gitignored) ---
await mkdir(OUT, { recursive: true });
const cbr = (rate) => [
  "-preset",
  "ultrafast",
  ...["-b:v", rate, "-minrate", rate, "-maxrate", rate, "-bufsize", rate],
  ...["-x264-params", "nal-hrd=cbr:force-cfr=1", "-movflags", "+faststart"],
];
// bench-http.mjs's file, with its settings, so whichever part runs first makes it for both.
await generateVideo(SPARSE_SOURCE, { size: "1920x1080", seconds: 300, extra: cbr("3M") });
const hdBase = join(OUT, "load-1min-720p30.mp4");
const sdBase = join(OUT, "load-30s-480p30.mp4");
await generateVideo(hdBase, { size: "1280x720", seconds: 60, extra: cbr("2M") });
await generateVideo(sdBase, { size: "854x480", seconds: 30, extra: cbr("1M") });

/** Copies of one file: the same pictures under other bytes (a remux with a comment). */
async function copiesOf(base, count) {
  const paths = [];
  for (let k = 0; k < count; k++) {
    const path = base.replace(/\.mp4$/, `-copy${k}.mp4`);
    if (!existsSync(path)) {
      const partial = `${path}.part.mp4`;
      await runTimed("ffmpeg", [
        ...["-hide_banner", "-loglevel", "error", "-y", "-i", base, "-c", "copy"],
        ...["-metadata", `comment=load bench copy ${k}`, "-movflags", "+faststart", partial],
      ]);
      await rename(partial, path);
    }
    paths.push(path);
  }
  return paths;
}
const hdPaths = await copiesOf(hdBase, HD_COPIES);
const sdPaths = await copiesOf(sdBase, SD_COPIES);
const origins = [
  await serveFile(SPARSE_SOURCE),
  ...(await Promise.all(hdPaths.map((p) => serveFile(p)))),
  ...(await Promise.all(sdPaths.map((p) => serveFile(p)))),
];
const sparseUrl = origins[0].url;
const hdUrls = origins.slice(1, 1 + HD_COPIES).map((o) => o.url);
const sdUrls = origins.slice(1 + HD_COPIES).map((o) => o.url);

// The edge's storage (D1, R2, the Durable Objects) are services in production, on other
// machines than the extractor's; locally they are SQLite and files that workerd writes on its
// one thread. On this machine's disk their commits waited behind the frames' writes, and the
// reads under load measured the disk, not the edge (decision 0289). So the stack's state lives
// in memory (/dev/shm) where there is one, for the idle figures and the loaded ones alike.
const memoryDir = "/dev/shm";
const stateOnDisk = flags["state-on-disk"] || !existsSync(memoryDir);
const stateDir = mkdtempSync(join(stateOnDisk ? tmpdir() : memoryDir, "stills-bench-load-"));
console.log(`the stack's state: ${stateOnDisk ? "on disk" : "in memory"} (${stateDir})`);
const stack = await startBenchStack(stateDir, {
  // The extractor's and the edge's whole logs in this directory, to read a run's phases after.
  ...(process.env.STILLS_BENCH_LOG_DIR ? { logDir: process.env.STILLS_BENCH_LOG_DIR } : {}),
});

const client = loadClient(stack);
const { newAccount, runJob, submit, check, reads, withPeaks, workload } = client;

/** A workload and its baseline, in the order the round says; answers both and the checks. */
async function timedAgainstHand(entries, accounts, handFirst) {
  const specs = entries.map((e) => e.spec);
  let hand;
  if (handFirst) hand = await byHand(specs);
  const { result, peaks, cpu } = await withPeaks(() => workload(entries));
  if (!handFirst) hand = await byHand(specs);
  const problems = await check(result.results, accounts);
  return { ...result, hand, peaks, cpu, problems };
}

/**
 * Where a job's time went, from its own times (the edge's clock, the same machine): posted
 * until created, created until an attempt started (the queue, the dispatch), started until
 * completed (the extractor's run, the upload, the settlement), completed until the client read
 * it.
 */
const phases = (x) => {
  const at = (iso) => (iso ? Date.parse(iso) : Number.NaN);
  const created = at(x.job.created_at);
  const started = at(x.job.started_at);
  const completed = at(x.job.completed_at);
  const end = x.sentEpochMs + x.seconds * 1000;
  const s = (ms) => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : "?");
  return (
    `post ${s(created - x.sentEpochMs)}, queued ${s(started - created)}, ` +
    `run ${s(completed - started)}, read ${s(end - completed)} s`
  );
};

/** B's steps as the extractor logged them (its last lines), in seconds from the first. */
const extractorSteps = (x) => {
  const steps = [];
  for (const line of (x.extractorLines ?? "").split("\n")) {
    try {
      const entry = JSON.parse(line);
      if (entry.job === x.job.id)
        steps.push([entry.event ?? entry.message, Date.parse(entry.time)]);
    } catch {}
  }
  if (steps.length === 0) return "not in the log's tail";
  return steps.map(([what, t]) => `${what} +${((t - steps[0][1]) / 1000).toFixed(2)}`).join(", ");
};

/**
 * Where a workload's CPU went: ffmpeg and ffprobe, the extractor's Node, workerd, the edge's Node
 * host (edge-host.mjs, or wrangler under `wrangler dev`), the bench's own process (its origin
 * serves every job's bytes).
 */
const cpuLine = (cpu, wall) =>
  `  CPU-s: media ${cpu.media.toFixed(1)}, extractor ${cpu.extractor.toFixed(1)}, workerd ` +
  `${cpu.workerd.toFixed(1)}, host ${cpu.host.toFixed(1)}, bench ${cpu.bench.toFixed(1)} ` +
  `(${wall.toFixed(1)} s × 2 cores = ${(2 * wall).toFixed(1)})`;

const nearestRank = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
};
const s2 = (v) => (Number.isFinite(v) ? v.toFixed(2) : String(v));
const gb = (kb) => (kb * 1024) / 1e9;

async function round(r) {
  const rng = (phase, i) => seededRandom(r * 100_000 + phase * 1000 + i);
  const problems = [];
  const figures = {};
  const phase = async (name, work) => {
    if (name === "solo" && !runs("mixed") && !runs("ten")) return;
    if (PHASES.includes(name) && !runs(name)) return;
    try {
      await work();
    } catch (err) {
      problems.push(`${name}: ${err.message}`);
    }
  };

  // 1. solo latencies, one kind at a time.
  const solo = {};
  await phase("solo", async () => {
    const account = await newAccount(`solo-r${r}`);
    const files = { sparse: sparseUrl, count6: hdUrls[0], ts3: sdUrls[0], dense: hdUrls[8] };
    const results = [];
    for (const [i, kind] of Object.keys(files).entries()) {
      const runs = [];
      for (let n = 0; n < SOLO_RUNS; n++) {
        const done = await runJob(KINDS[kind](files[kind], rng(1, i * 10 + n)), account.key);
        results.push({ ...done, account });
        runs.push(done.seconds);
      }
      solo[kind] = median(runs);
    }
    const wrong = await check(results, [account]);
    if (wrong.length) throw new Error(wrong.join("; "));
  });
  console.log(
    `round ${r + 1} solo: ${Object.entries(solo)
      .map(([k, s]) => `${k} ${s2(s)} s`)
      .join(", ")}`,
  );

  // 2. mixed: four accounts, 28 jobs.
  await phase("mixed", async () => {
    const accounts = await Promise.all([0, 1, 2, 3].map((a) => newAccount(`mixed${a}-r${r}`)));
    const entries = [];
    for (let i = 0; i < 8; i++) {
      entries.push({ spec: KINDS.sparse(sparseUrl, rng(2, i)) });
      entries.push({ spec: KINDS.count6(hdUrls[i], rng(3, i)) });
      entries.push({ spec: KINDS.ts3(sdUrls[i], rng(4, i)) });
      if (i < 4) entries.push({ spec: KINDS.dense(hdUrls[8 + i], rng(5, i)) });
    }
    for (const [i, e] of entries.entries()) e.account = accounts[i % 4];
    const mixed = await timedAgainstHand(entries, accounts, r % 2 === 0);
    if (mixed.problems.length) throw new Error(mixed.problems.join("; "));
    const ratios = mixed.results.map((x) => x.seconds / solo[x.spec.kind]);
    figures.mixed = mixed.wall / mixed.hand.seconds;
    figures.p95 = nearestRank(ratios, 0.95);
    figures.rss = [mixed.peaks.extractorKb];
    figures.workerd = [mixed.peaks.workerdKb];
    console.log(
      `round ${r + 1} mixed: ${entries.length} jobs in ${s2(mixed.wall)} s, by hand ` +
        `${s2(mixed.hand.seconds)} s (${mixed.hand.frames} frames) → ${figures.mixed.toFixed(2)}; ` +
        `peak RSS extractor+children ${gb(mixed.peaks.extractorKb).toFixed(2)} GB, workerd ` +
        `${gb(mixed.peaks.workerdKb).toFixed(2)} GB`,
    );
    for (const kind of ["sparse", "count6", "ts3", "dense"]) {
      const own = mixed.results.filter((x) => x.spec.kind === kind).map((x) => x.seconds);
      console.log(
        `  ${kind.padEnd(6)} latency p50 ${s2(nearestRank(own, 0.5))} p95 ${s2(nearestRank(own, 0.95))} ` +
          `max ${s2(Math.max(...own))} s, solo ${s2(solo[kind])} s → p95 ÷ solo ` +
          `${s2(nearestRank(own, 0.95) / solo[kind])}`,
      );
    }
    console.log(`  every job's latency ÷ its kind's solo: p95 ${s2(figures.p95)}`);
    console.log(cpuLine(mixed.cpu, mixed.wall));
  });

  // 3. ten sparse jobs from one account.
  await phase("ten", async () => {
    const account = await newAccount(`ten-r${r}`);
    const entries = Array.from({ length: 10 }, (_, i) => ({
      spec: KINDS.sparse(sparseUrl, rng(6, i)),
      account,
    }));
    const ten = await timedAgainstHand(entries, [account], r % 2 === 1);
    if (ten.problems.length) throw new Error(ten.problems.join("; "));
    figures.ten = ten.wall / ten.hand.seconds;
    figures.rss = [...(figures.rss ?? []), ten.peaks.extractorKb];
    figures.workerd = [...(figures.workerd ?? []), ten.peaks.workerdKb];
    const own = ten.results.map((x) => x.seconds);
    console.log(
      `round ${r + 1} ten: 10 sparse jobs in ${s2(ten.wall)} s, by hand ${s2(ten.hand.seconds)} s ` +
        `→ ${figures.ten.toFixed(2)}; latency p50 ${s2(nearestRank(own, 0.5))} max ` +
        `${s2(Math.max(...own))} s (solo ${s2(solo.sparse)} s); peak RSS extractor+children ` +
        `${gb(ten.peaks.extractorKb).toFixed(2)} GB`,
    );
    console.log(cpuLine(ten.cpu, ten.wall));
  });

  // 4. fairness, and the reads under load.
  await phase("fairness", async () => {
    const [a, b] = await Promise.all([newAccount(`a-r${r}`), newAccount(`b-r${r}`)]);
    // B's files are its own: A's jobs use the first ten copies, so nothing B asks for is a
    // source A's jobs are decoding.
    const bSolos = [];
    for (let n = 0; n < SOLO_RUNS; n++) {
      bSolos.push(await runJob(KINDS.count6(hdUrls[10], rng(7, 10 + n)), b.key));
    }
    bSolos[0].extractorLines = stack.logTail("extractor");
    const bSolo = median(bSolos.map((x) => x.seconds));
    const idleBefore = await reads(IDLE_READ_SECONDS);
    const { result, peaks, cpu } = await withPeaks(async () => {
      const started = now();
      const aSpecs = Array.from({ length: A_JOBS }, (_, i) => KINDS.ts6(hdUrls[i % 10], rng(8, i)));
      const aRuns = [];
      const waiting = [];
      let outstanding = A_JOBS;
      // A posts all 30 at once; what its plan refuses (max_active_jobs) it posts again as its
      // own jobs finish, as a client with a queue of its own would.
      const failures = [];
      const track = (run) => {
        aRuns.push(
          run.finally(afterOne).catch((err) => {
            failures.push(err.message);
            return null;
          }),
        );
      };
      const afterOne = () => {
        outstanding--;
        postOrFail();
      };
      // A job that could not be posted again will never run: count it out, and say why.
      const postOrFail = () =>
        postWaiting().catch((err) => {
          failures.push(err.message);
          outstanding--;
        });
      const postWaiting = async () => {
        const spec = waiting.shift();
        if (!spec) return;
        const again = await submit(spec, a.key);
        if (!again.refused) track(again.run);
        else {
          waiting.push(spec);
          setTimeout(postOrFail, 500);
        }
      };
      const first = await Promise.all(aSpecs.map((spec) => submit(spec, a.key)));
      for (const s of first) {
        if (s.refused) waiting.push(s.spec);
        else track(s.run);
      }
      const accepted = A_JOBS - waiting.length;
      const bDone = await runJob(KINDS.count6(hdUrls[11], rng(7, 1)), b.key);
      bDone.extractorLines = stack.logTail("extractor");
      const loaded = await reads(LOADED_READ_SECONDS, () => outstanding === 0);
      while (outstanding > 0 && now() - started < JOB_DEADLINE_MS) await sleep(50);
      const aResults = await Promise.all(aRuns);
      if (failures.length) throw new Error(`A's jobs: ${failures.join("; ")}`);
      return { accepted, bDone, loaded, aResults, aWall: (now() - started) / 1000 };
    });
    const { accepted, bDone, loaded, aResults, aWall } = result;
    const idleAfter = await reads(IDLE_READ_SECONDS);
    const idleRps = (idleBefore.rps + idleAfter.rps) / 2;
    const wrong = await check(
      [
        ...aResults.map((x) => ({ ...x, account: a })),
        ...bSolos.map((x) => ({ ...x, account: b })),
        { ...bDone, account: b },
      ],
      [a, b],
    );
    if (wrong.length) throw new Error(wrong.join("; "));
    figures.fair = bDone.seconds / bSolo;
    figures.rss = [...(figures.rss ?? []), peaks.extractorKb];
    figures.workerd = [...(figures.workerd ?? []), peaks.workerdKb];
    if (loaded.seconds < 1) {
      throw new Error(
        `A's jobs ended ${loaded.seconds.toFixed(2)} s into the reads: no load to read under`,
      );
    }
    const idleOther = idleBefore.other + idleAfter.other;
    if (loaded.other > 0 || idleOther > 0) {
      throw new Error(`reads answered other than 200: ${idleOther} idle, ${loaded.other} loaded`);
    }
    figures.reads = loaded.rps / idleRps;
    console.log(
      `round ${r + 1} fairness: A ${accepted} of ${A_JOBS} jobs accepted at once (the rest posted ` +
        `as A's finished), all ${aResults.length} done in ${s2(aWall)} s; B ${s2(bDone.seconds)} s ` +
        `against ${s2(bSolo)} s alone → ${figures.fair.toFixed(2)}; reads ` +
        `${loaded.rps.toFixed(0)}/s over ${s2(loaded.seconds)} s against ${idleRps.toFixed(0)}/s idle ` +
        `(${idleBefore.rps.toFixed(0)} before, ${idleAfter.rps.toFixed(0)} after) → ` +
        figures.reads.toFixed(2),
    );
    console.log(cpuLine(cpu, aWall));
    const rc = (x) =>
      `workerd ${x.cpu.workerd.toFixed(2)}, extractor ${x.cpu.extractor.toFixed(2)}, bench ` +
      `${x.cpu.bench.toFixed(2)} CPU-s over ${s2(x.seconds)} s`;
    console.log(
      `  reads' CPU, loaded: ${rc(loaded)}; idle before: ${rc(idleBefore)}; after: ${rc(idleAfter)}`,
    );
    console.log(`  B's phases loaded: ${phases(bDone)}; alone: ${phases(bSolos[0])}`);
    console.log(
      `  B's run in the extractor's log, loaded: ${extractorSteps(bDone)}; alone: ` +
        extractorSteps(bSolos[0]),
    );
  });
  for (const p of problems) console.log(`round ${r + 1} WRONG: ${p}`);
  return { figures, problems };
}

const rounds = [];
let allMet = false;
try {
  // The reader: a completed job to read, and keys enough that its limiter never refuses.
  const reader = await newAccount("reader");
  await client.addReadKeys(reader, READ_KEYS);
  // Warm-up, not counted: one job of each kind (the first jobs of a fresh stack run slower).
  const warm = [];
  const files = { ts3: sdUrls[0], count6: hdUrls[0], sparse: sparseUrl, dense: hdUrls[8] };
  for (const [i, [kind, url]] of Object.entries(files).entries()) {
    const done = await runJob(KINDS[kind](url, seededRandom(999_000 + i)), reader.key);
    const wrong = jobProblems(done.spec, done.job);
    if (wrong.length) throw new Error(`warm-up: ${wrong.join("; ")}`);
    client.read.jobId ??= done.job.id;
    warm.push(`${kind} ${s2(done.seconds)} s`);
  }
  console.log(`warm-up (not counted): ${warm.join(", ")}`);
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round(r));
} finally {
  client.stop();
  await stack.stop();
  await Promise.all(origins.map((o) => o.close()));
  rmSync(stateDir, { recursive: true, force: true });
}

/** bench-http.mjs as it runs on its own; answers its per-round API ÷ fps ratios. */
function httpRatios() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, "bench-http.mjs")], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, BENCH_ROUNDS: String(Math.max(5, ROUNDS)) },
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      out += d;
      process.stdout.write(d.replace(/^(?=.)/gm, "  http │ "));
    });
    child.on("close", () => {
      const line = out.split("\n").find((l) => l.startsWith("12 timestamps through the API"));
      const listed = /rounds: ([-\d. ]+)\)/.exec(line ?? "")?.[1];
      resolve(listed ? listed.trim().split(/\s+/).map(Number) : [Number.NaN]);
    });
  });
}

// Each goal's line, and a row of the table docs/benchmarks.md carries.
const table = [];
function reportRow(name, values, options) {
  const met = reportGoal(name, values, options);
  const fmt = (v) => `${v.toFixed(options.digits ?? 2)}${options.unit ?? ""}`;
  table.push(
    `| ${name} | ${options.goal} | ${fmt(median(values))} | ${fmt(Math.min(...values))}–` +
      `${fmt(Math.max(...values))} | ${met ? "MET" : "NOT MET"} |`,
  );
  return met;
}
const values = (name) => rounds.map((r) => r.figures[name] ?? Number.NaN);
console.log(
  `\nload: ${ROUNDS} rounds on the tree as it is; a round with a wrong job has no figures for that phase`,
);
const goalsRun = [
  ["ten", "one account's 10 sparse jobs"],
  ["mixed", "mixed workload"],
  ["mixed", "p95 of job latency"],
  ["fairness", "account B's job"],
  [null, "peak RSS"],
  ["fairness", "authenticated read"],
];
/** A goal's line is printed only when its phase ran (all of them without --only). */
const goal = (name, ...rest) => {
  const phaseOf = goalsRun.find(([, start]) => name.startsWith(start))?.[0];
  return phaseOf && !runs(phaseOf) ? true : reportRow(name, ...rest);
};
const goals = [
  goal("one account's 10 sparse jobs at once ÷ the same frames by hand", values("ten"), {
    goal: "≤ 0.75",
    meets: (v) => v <= 0.75,
  }),
  goal("mixed workload of four accounts ÷ the hand-made baseline", values("mixed"), {
    goal: "≤ 0.75",
    meets: (v) => v <= 0.75,
  }),
  goal("p95 of job latency under the mixed workload ÷ its kind's solo", values("p95"), {
    goal: "≤ 3",
    meets: (v) => v <= 3,
  }),
  goal("account B's job while A has 30 queued ÷ B's job alone", values("fair"), {
    goal: "≤ 2",
    meets: (v) => v <= 2,
  }),
  goal(
    "peak RSS, extractor + children, during the workloads",
    rounds.map((r) => (r.figures.rss ? gb(Math.max(...r.figures.rss)) : Number.NaN)),
    { goal: "≤ 1.2 GB", meets: (v) => v <= 1.2, unit: " GB" },
  ),
  goal("authenticated read under the workload ÷ idle", values("reads"), {
    goal: "≥ 0.5",
    meets: (v) => v >= 0.5,
  }),
];
const workerd = rounds.flatMap((r) => r.figures.workerd ?? []);
if (workerd.length) {
  console.log(
    `not a goal: peak RSS of workerd during the workloads ${gb(Math.max(...workerd)).toFixed(2)} GB`,
  );
}
if (!flags["skip-http"]) {
  console.log("\nthe single sparse job over HTTP (bench-http.mjs, its own stack):");
  goals.push(
    goal("one sparse job over HTTP through the API ÷ fps pass", await httpRatios(), {
      goal: "≤ 0.075",
      meets: (v) => v <= 0.075,
      digits: 3,
    }),
  );
}
const wrong = rounds.flatMap((r) => r.problems);
if (wrong.length) console.log(`${wrong.length} wrong result(s): see the WRONG lines above`);
console.log(
  `\n| measure (${ROUNDS} rounds) | goal | median | spread | status |\n|---|---|---|---|---|\n${table.join("\n")}`,
);
allMet = goals.every(Boolean) && wrong.length === 0;
process.exitCode = allMet ? 0 : 1;
