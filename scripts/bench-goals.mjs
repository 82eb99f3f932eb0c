// What the benchmark parts share: rounds summarised as median and spread, a goal judged MET
// only when every round meets it (one lucky round proves nothing on a shared machine), a
// Range-honouring origin on 127.0.0.1 that counts the bytes it sends, and child processes
// timed from this process. Not a part of its own: bench.mjs lists the parts.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rename } from "node:fs/promises";
import http from "node:http";
import { descendants } from "./lib/stack.mjs";

/** Rounds of each part, unless BENCH_ROUNDS says otherwise (at least 5). */
export const ROUNDS = Math.max(5, Number(process.env.BENCH_ROUNDS ?? 5));

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * One goal's line: median, spread (lowest–highest) and every round, then MET only if every
 * round meets the goal. Returns whether it was met.
 */
export function reportGoal(name, values, { goal, meets, digits = 2, unit = "" }) {
  const met = values.length > 0 && values.every(meets);
  const fmt = (v) => `${v.toFixed(digits)}${unit}`;
  const low = Math.min(...values);
  const high = Math.max(...values);
  console.log(
    `${name}: median ${fmt(median(values))} (spread ${fmt(low)}–${fmt(high)}, ` +
      `${values.length} rounds: ${values.map(fmt).join(" ")}) goal ${goal} → ` +
      `${met ? "MET" : "NOT MET"}`,
  );
  return met;
}

/** Runs a command to its end; resolves with its wall time in seconds, stdout and stderr tail. */
export function runTimed(command, args) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
    child.on("error", reject);
    child.on("close", (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) reject(new Error(`${command} exited ${code}: ${stderr}`));
      else resolve({ seconds, stdout, stderr });
    });
  });
}

/** A lavfi test video made once (bench/out is gitignored); GOP 2 s at 30 fps. */
export async function generateVideo(path, { size, seconds, extra = [] }) {
  if (existsSync(path)) return;
  console.log(`generating ${path} (once)…`);
  const partial = `${path}.part.mp4`;
  await runTimed("ffmpeg", [
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
    partial,
  ]);
  await rename(partial, path);
}

// The origin's body goes out in pieces of this size (a file stream's chunk, as it was: the
// bytes counted for a reader that hangs up stay comparable), each counted as it is written.
const ORIGIN_PIECE_BYTES = 64 * 1024;

/**
 * A minimal origin on 127.0.0.1 that honours Range (bytes=a-b and bytes=a-) and counts the
 * body bytes it actually sends, so bytes-read figures come from the origin's side. It stands
 * in for a remote server, yet shares the machine's two cores with the job it serves: so it
 * serves the file from memory (read once), written as the socket drains, instead of through
 * a file stream's reads on the thread pool (measured 2026-11-27: the bench process spent
 * ~70 ms of CPU per http job, ~3 % of the job's own CPU, mostly on that).
 * A reader that hangs up stops the writing, and what was not written is not counted.
 */
export async function serveFile(path, contentType = "video/mp4") {
  const file = await readFile(path);
  const size = file.length;
  let sent = 0;
  let requests = 0;
  const server = http.createServer(async (request, response) => {
    requests += 1;
    const match = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? "");
    const start = match ? Number(match[1]) : 0;
    const end = match?.[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
    if (start >= size) {
      response.writeHead(416, { "content-range": `bytes */${size}` }).end();
      return;
    }
    response.writeHead(match ? 206 : 200, {
      "content-type": contentType,
      "accept-ranges": "bytes",
      "content-length": end - start + 1,
      ...(match ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    });
    let closed = false;
    response.on("close", () => {
      closed = true;
    });
    for (let at = start; at <= end && !closed; at += ORIGIN_PIECE_BYTES) {
      const piece = file.subarray(at, Math.min(at + ORIGIN_PIECE_BYTES, end + 1));
      sent += piece.length;
      if (!response.write(piece)) {
        await new Promise((resolve) => {
          const done = () => {
            response.off("drain", done);
            response.off("close", done);
            resolve();
          };
          response.on("drain", done);
          response.on("close", done);
        });
      }
    }
    response.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/video.mp4`,
    size,
    sent: () => sent,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/** The extractor's "job finished" log line for one job, from the stack's kept stderr tail. */
export function jobFinishedLine(stack, jobId) {
  for (const line of stack.logTail("extractor").split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    try {
      const entry = JSON.parse(line);
      if (entry.message === "job finished" && entry.job === jobId) return entry;
    } catch {
      // A line cut by the tail's start.
    }
  }
  return null;
}

/** The same, waiting up to a second for the line: it is written as the extractor answers. */
export async function waitForJobFinished(stack, jobId) {
  for (let i = 0; i < 20; i++) {
    const line = jobFinishedLine(stack, jobId);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

/**
 * RSS of a process and all its descendants (Linux /proc), in kB. Walks only the tree, through
 * each thread's children list: scanning all of /proc every 100 ms would itself cost CPU and
 * skew the timings measured alongside.
 */
export async function treeRssKb(pid) {
  let total = 0;
  for (const one of [pid, ...(await descendants(pid))]) {
    const status = await readFile(`/proc/${one}/status`, "utf8").catch(() => "");
    total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return total;
}
