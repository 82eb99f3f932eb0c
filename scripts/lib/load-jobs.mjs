// The jobs of the load benchmark (scripts/bench-load.mjs) as data: what each job asks the API,
// which frames and credits it must come back with, and the hand-made baseline of the same
// frames. Expected frames and credits are worked out here from the published rules (spec §1,
// DESIGN.md's frame plan), not by importing the code under test, so a bench run that passes
// has checked the service against the rules rather than against itself.
import { mkdtempSync, rmSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTimed } from "../bench-goals.mjs";

/** mulberry32: a small seeded generator, so every run asks for the same frames. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ms = (v) => Math.round(v * 1000) / 1000;
const us = (v) => Math.round(v * 1e6) / 1e6;

/** `n` distinct moments in [from, to), to the millisecond, sorted. */
function randomMoments(random, n, from, to) {
  const moments = new Set();
  while (moments.size < n) moments.add(ms(from + random() * (to - from)));
  return [...moments].sort((a, b) => a - b);
}

/** Credits of a completed job whose frames are all ok (spec §1, rules 1 and 2). */
export function expectedCredits(mode, processedSeconds, frames) {
  if (mode === "timestamps") return Math.ceil(frames / 10);
  const minutes = Math.max(1, Math.ceil(processedSeconds / 60));
  return minutes + Math.ceil(Math.max(0, frames - 100 * minutes) / 100);
}

/**
 * The kinds of job, each on the file the caller hands it (its own copy where jobs of one
 * workload must not share a source), with moments drawn from `random`:
 * - sparse: 12 timestamps of the 5-minute 1080p file;
 * - count6: count 6 over a 55 s range of a 1-minute 720p copy, the range's start drawn in
 *   [0, 4) s (the "count-6 on a 1-minute file", made unique per job);
 * - ts3: 3 timestamps of a 30-second 480p copy;
 * - dense: every 0.5 s over a 30 s window of a 1-minute 720p copy, the window drawn;
 * - ts6: 6 timestamps of a 1-minute 720p copy (account A's queue in the fairness round).
 */
export const KINDS = {
  sparse: (url, random) => timestampsJob("sparse", url, randomMoments(random, 12, 0.5, 298.5)),
  count6(url, random) {
    const start = ms(random() * 4);
    const end = start + 55;
    const timestamps = Array.from({ length: 6 }, (_, i) => us(start + ((i + 0.5) * 55) / 6));
    return {
      kind: "count6",
      body: { url, count: 6, start, end },
      timestamps,
      credits: expectedCredits("count", 55, 6),
      baseline: timestamps.map((t) => ({ url, seek: t })),
    };
  },
  ts3: (url, random) => timestampsJob("ts3", url, randomMoments(random, 3, 0.2, 29.5)),
  dense(url, random) {
    const start = ms(random() * 29);
    const end = start + 30;
    const timestamps = Array.from({ length: 60 }, (_, k) => us(start + k * 0.5));
    return {
      kind: "dense",
      body: { url, mode: "interval", every: 0.5, start, end },
      timestamps,
      credits: expectedCredits("interval", 30, 60),
      // One fps pass over the window, as a user scripts a dense job.
      baseline: [{ url, seek: start, fpsFor: 30, frames: 60 }],
    };
  },
  ts6: (url, random) => timestampsJob("ts6", url, randomMoments(random, 6, 0.5, 59)),
};

function timestampsJob(kind, url, timestamps) {
  return {
    kind,
    body: { url, timestamps },
    timestamps,
    credits: expectedCredits("timestamps", 0, timestamps.length),
    baseline: timestamps.map((t) => ({ url, seek: t })),
  };
}

// The sources are 30 fps: the frame shown at t has its pts in (t − 1/30, t].
const FRAME_SECONDS = 1 / 30;

/**
 * What is wrong with a finished job against its spec: status, frame count, every frame's
 * timestamp (as the API reports it) and the picture shown then (its pts), and the charge.
 * Empty when nothing is.
 */
export function jobProblems(spec, job) {
  const name = `${spec.kind} job ${job?.id ?? "?"}`;
  if (job?.status !== "completed") {
    return [`${name} ended ${job?.status}: ${JSON.stringify(job?.error ?? job)}`];
  }
  const problems = [];
  const frames = job.frames ?? [];
  if (frames.length !== spec.timestamps.length) {
    problems.push(`${name}: ${frames.length} frames, expected ${spec.timestamps.length}`);
  }
  for (const [i, frame] of frames.entries()) {
    const wanted = spec.timestamps[i];
    if (frame.status !== "ok" || !frame.url) {
      problems.push(`${name}: frame ${frame.index} is ${frame.status} (${frame.error})`);
    } else if (!(Math.abs(frame.timestamp - wanted) < 1e-6)) {
      problems.push(`${name}: frame ${frame.index} at ${frame.timestamp}, expected ${wanted}`);
    } else if (typeof frame.pts === "number") {
      const lag = frame.timestamp - frame.pts;
      if (!(lag >= -1e-6 && lag < FRAME_SECONDS + 1e-6)) {
        problems.push(`${name}: frame ${frame.index} shows pts ${frame.pts}, not ${wanted}`);
      }
    } else {
      problems.push(`${name}: frame ${frame.index} has no pts to check`);
    }
  }
  // Three lines say enough about one job; a shifted plan would print every frame.
  if (problems.length > 3)
    problems.splice(3, problems.length, `${name}: and ${problems.length - 3} more`);
  if (job.credits_charged !== spec.credits) {
    problems.push(`${name}: charged ${job.credits_charged}, the rules say ${spec.credits}`);
  }
  return problems;
}

/**
 * The ffmpeg arguments of one hand-made task: one accurate seek per frame
 * (`-ss T -i URL -frames:v 1`), or one fps pass over a dense job's window.
 */
export function baselineArgs(task, output) {
  const common = ["-hide_banner", "-loglevel", "error", "-y", "-ss", String(task.seek)];
  if (task.fpsFor) {
    return [
      ...common,
      "-t",
      String(task.fpsFor),
      "-i",
      task.url,
      "-vf",
      "fps=2",
      "-q:v",
      "2",
      `${output}-%03d.jpg`,
    ];
  }
  return [...common, "-i", task.url, "-frames:v", "1", "-q:v", "2", `${output}.jpg`];
}

/**
 * The same frames by hand, two ffmpeg at a time (the cores), the longest tasks (fps passes)
 * first; answers the wall time, after checking every frame was written.
 */
export async function byHand(specs) {
  const tasks = specs.flatMap((s) => s.baseline).sort((a, b) => (b.fpsFor ?? 0) - (a.fpsFor ?? 0));
  const dir = mkdtempSync(join(tmpdir(), "stills-bench-hand-"));
  try {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      [0, 1].map(async () => {
        while (next < tasks.length) {
          const i = next++;
          await runTimed("ffmpeg", baselineArgs(tasks[i], join(dir, `t${i}`)));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const made = (await readdir(dir)).length;
    const wanted = tasks.reduce((sum, t) => sum + (t.frames ?? 1), 0);
    if (made !== wanted) throw new Error(`the baseline made ${made} frames, not ${wanted}`);
    return { seconds, frames: made };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
