// The fuzzer: broken media (fuzz-media.ts) through the extractor's real job path. The service
// itself (extractor/main.ts) runs as a child process with a short deadline, fetches each file
// from a loopback origin (with byte ranges, or without so it downloads to a temp file), and
// reports to a stand-in edge. Every file must end as frames (real JPEGs), NoVideoFound or
// ExtractionFailed within its deadline; the service must never crash, and after each wave
// of files no temp directory and no media process of it may be left.
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { SOURCE_DIR_PREFIX } from "../../extractor/leftovers.ts";
import { processStartTime } from "../../extractor/owner.ts";
import type { ExtractRequest, ExtractResult } from "../../schema/messages.ts";
import { freePort, ROOT } from "../../scripts/lib/stack.mjs";
import { resultFor, startFakeEdge } from "../extractor/fake-edge.ts";
import { startTestServer } from "../sources/support/servers.ts";
import type { FuzzContainer, Mutation } from "./fuzz-media.ts";
import {
  CONTENT_TYPES,
  caseSeed,
  FUZZ_CONTAINERS,
  fuzzBaseFiles,
  MUTATIONS,
  mutate,
  prng,
} from "./fuzz-media.ts";
import { markedProcesses } from "./processes.ts";

export interface FuzzOptions {
  seed: number;
  files: number;
  /** The extractor's job deadline (EXTRACTOR_JOB_TIMEOUT_SECONDS). */
  deadlineSeconds?: number;
  /** Files checked for leaks together (the service runs two at a time). */
  waveSize?: number;
  progress?: (line: string) => void;
}

export interface FuzzOutcome {
  index: number;
  container: FuzzContainer;
  mutation: Mutation;
  detail: string;
  ranges: boolean;
  /** "frames", or the error name the job ended with, or what went wrong instead. */
  verdict: string;
  seconds: number;
  clean: boolean;
  problem?: string;
}

export interface FuzzReport {
  seed: number;
  /** Files asked for; after a crash fewer have outcomes. */
  files: number;
  outcomes: FuzzOutcome[];
  clean: number;
  /** Temp directories or processes found after a wave, and a crash of the service. */
  leaks: string[];
  crashed: string | null;
}

const TOKEN = "fuzz-internal-token";
const ENDINGS = new Set(["NoVideoFound", "ExtractionFailed"]);
const TIMESTAMPS = [0.3, 1.1, 1.9];
/** Time to post the result and answer, on top of the job's own deadline. */
const ANSWER_SLACK_SECONDS = 5;

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const deadlineSeconds = options.deadlineSeconds ?? 8;
  const waveSize = options.waveSize ?? 20;
  const bases = await fuzzBaseFiles();
  const edge = await startFakeEdge(TOKEN);
  const origin = await startTestServer();
  const served = new Map<string, { bytes: Buffer; type: string; ranges: boolean }>();
  origin.route("/fuzz", (req, res) => serveCase(req, res, served));
  const tempRoot = mkdtempSync(join(tmpdir(), "stills-fuzz-"));
  const service = await startService(tempRoot, deadlineSeconds);
  const report: FuzzReport = {
    seed: options.seed,
    files: options.files,
    outcomes: [],
    clean: 0,
    leaks: [],
    crashed: null,
  };
  try {
    for (let first = 0; first < options.files && !report.crashed; first += waveSize) {
      const wave = Array.from(
        { length: Math.min(waveSize, options.files - first) },
        (_, i) => first + i,
      );
      // Two at a time, as many as the service runs at once.
      const queue = [...wave];
      const done: FuzzOutcome[] = [];
      const worker = async () => {
        for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
          done.push(await runCase(index));
        }
      };
      await Promise.all([worker(), worker()]);
      const span = `files ${first}–${wave.at(-1)}`;
      if (service.child.exitCode !== null || service.child.signalCode !== null) {
        report.crashed = `the extractor exited (${service.child.signalCode ?? service.child.exitCode}) during ${span}:\n${service.tail()}`;
      }
      const leaks = report.crashed ? [] : await leftovers(tempRoot, service.owner);
      for (const leak of leaks) report.leaks.push(`after ${span}: ${leak}`);
      // Leaks and crashes are told apart only by wave: every file of the wave answers for them.
      for (const outcome of done) {
        if (outcome.clean && (leaks.length > 0 || report.crashed)) {
          outcome.clean = false;
          outcome.problem = report.crashed ? "the extractor crashed" : `left behind ${leaks[0]}`;
        }
        if (outcome.clean) report.clean += 1;
        report.outcomes.push(outcome);
      }
      options.progress?.(`${first + wave.length} of ${options.files} files run`);
    }
  } finally {
    service.child.kill("SIGTERM");
    await new Promise((resolve) => service.child.once("exit", resolve));
    await origin.close();
    await edge.close();
    rmSync(tempRoot, { recursive: true, force: true });
  }
  report.outcomes.sort((a, b) => a.index - b.index);
  return report;

  async function runCase(index: number): Promise<FuzzOutcome> {
    const random = prng(caseSeed(options.seed, index));
    const container = FUZZ_CONTAINERS[index % FUZZ_CONTAINERS.length];
    const mutation = MUTATIONS[Math.floor(index / FUZZ_CONTAINERS.length) % MUTATIONS.length];
    const ranges = Math.floor(index / (FUZZ_CONTAINERS.length * MUTATIONS.length)) % 2 === 0;
    const { bytes, detail } = mutate(bases[container], container, mutation, random);
    const name = `${index}.${container}`;
    served.set(name, { bytes, type: CONTENT_TYPES[container], ranges });
    const base = { index, container, mutation, detail, ranges };
    const request: ExtractRequest = {
      job_id: randomUUID(),
      kind: "job",
      tenant: "account:fuzz",
      url: `${origin.origin}/fuzz?file=${name}`,
      platform: "direct",
      options: {
        mode: "timestamps",
        timestamps: TIMESTAMPS,
        format: "jpg",
        resolution: 240,
        output: "urls",
      },
      max_video_seconds: 900,
      clip_to_max: false,
      max_frames: 100,
      callback: { base_url: edge.baseUrl, token: TOKEN },
    };
    const started = performance.now();
    let status = 0;
    try {
      const answer = await fetch(`${service.url}/extract`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(request),
        signal: AbortSignal.timeout((deadlineSeconds + 60) * 1000),
      });
      status = answer.status;
      await answer.body?.cancel();
      // 202: the job runs in the background; its end is the result it posts to the edge.
      if (status === 202) await resultFor(edge, request.job_id, (deadlineSeconds + 60) * 1000);
    } catch (error) {
      const seconds = (performance.now() - started) / 1000;
      return { ...base, verdict: "no answer", seconds, clean: false, problem: String(error) };
    } finally {
      served.delete(name);
    }
    const seconds = (performance.now() - started) / 1000;
    const result = edge.results.find((r) => r.job_id === request.job_id);
    const judged = await judge(status, result, edge.files);
    const late = seconds > deadlineSeconds + ANSWER_SLACK_SECONDS;
    const problem = judged.problem ?? (late ? `took ${seconds.toFixed(1)} s` : undefined);
    return { ...base, verdict: judged.verdict, seconds, clean: !problem, problem };
  }
}

async function judge(
  status: number,
  result: ExtractResult | undefined,
  files: Map<string, { bytes: Buffer }>,
): Promise<{ verdict: string; problem?: string }> {
  if (status !== 202 || !result) {
    const what = result ? `answered ${status}` : `answered ${status} and posted no result`;
    return { verdict: `HTTP ${status}`, problem: `the extractor ${what}` };
  }
  if (result.status === "failed") {
    const name = result.error?.name ?? "no error";
    return ENDINGS.has(name)
      ? { verdict: name }
      : { verdict: name, problem: `failed with ${name}: ${result.error?.message}` };
  }
  if (result.frames.length !== TIMESTAMPS.length) {
    return { verdict: "frames", problem: `${result.frames.length} frames in the result` };
  }
  for (const frame of result.frames.filter((f) => f.status === "ok")) {
    const stored = frame.key ? files.get(frame.key) : undefined;
    if (!stored) return { verdict: "frames", problem: `frame ${frame.index} was never uploaded` };
    const meta = await sharp(stored.bytes)
      .metadata()
      .catch(() => null);
    if (meta?.format !== "jpeg" || !meta.width || !meta.height) {
      return { verdict: "frames", problem: `frame ${frame.index} is not a readable JPEG` };
    }
  }
  return { verdict: "frames" };
}

interface Service {
  child: ChildProcess;
  url: string;
  owner: string;
  tail(): string;
}

async function startService(tempRoot: string, deadlineSeconds: number): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, "extractor/main.ts")], {
    env: {
      PATH: process.env.PATH,
      // Its downloads land here, where nothing else writes: what is left is its leak.
      TMPDIR: tempRoot,
      INTERNAL_TOKEN: TOKEN,
      EXTRACTOR_PORT: String(port),
      EXTRACTOR_CONCURRENCY: "2",
      EXTRACTOR_TENANT_SLOTS: "2",
      EXTRACTOR_JOB_TIMEOUT_SECONDS: String(deadlineSeconds),
      STILLS_ALLOW_PRIVATE_NETWORK: "1",
      EXTRACTOR_MEDIA_USER: "self",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines: string[] = [];
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    lines.push(...chunk.split("\n").filter(Boolean));
    if (lines.length > 100) lines.splice(0, lines.length - 100);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) break;
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) {
      const owner = `${child.pid}.${processStartTime(child.pid as number)}`;
      return { child, url, owner, tail: () => lines.join("\n") };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`the extractor did not start:\n${lines.join("\n")}`);
}

/** Temp directories in the service's own temp root, and live processes carrying its mark. */
async function leftovers(tempRoot: string, owner: string): Promise<string[]> {
  // A process killed at a deadline is gone a moment later; give stragglers that moment.
  for (let attempt = 0; ; attempt++) {
    const found = [
      ...readdirSync(tempRoot)
        .filter((name) => name.startsWith(SOURCE_DIR_PREFIX))
        .map((name) => `temp directory ${name}`),
      ...markedProcesses(owner).map((p) => `process ${p}`),
    ];
    if (found.length === 0 || attempt === 20) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function serveCase(
  req: IncomingMessage,
  res: ServerResponse,
  served: Map<string, { bytes: Buffer; type: string; ranges: boolean }>,
) {
  const name = new URL(req.url ?? "/", "http://origin").searchParams.get("file") ?? "";
  const file = served.get(name);
  if (!file) {
    res.writeHead(404).end();
    return;
  }
  const size = file.bytes.length;
  const match = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
  if (file.ranges && match) {
    const start = Number(match[1]);
    const end = Math.min(match[2] === "" ? size - 1 : Number(match[2]), size - 1);
    if (start >= size) {
      res.writeHead(416, { "content-range": `bytes */${size}` }).end();
      return;
    }
    res.writeHead(206, {
      "content-type": file.type,
      "content-length": end - start + 1,
      "content-range": `bytes ${start}-${end}/${size}`,
    });
    res.end(file.bytes.subarray(start, end + 1));
    return;
  }
  res.writeHead(200, { "content-type": file.type, "content-length": size });
  res.end(file.bytes);
}

/** "N of N files handled cleanly", the seed, a tally, and every file that was not. */
export function formatReport(report: FuzzReport): string {
  const tally = new Map<string, number>();
  for (const o of report.outcomes) {
    const key = `${o.container} ${o.verdict}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }
  const lines = [
    `seed ${report.seed}`,
    [...tally.entries()]
      .sort()
      .map(([key, n]) => `${key}: ${n}`)
      .join(", "),
  ];
  for (const o of report.outcomes.filter((x) => !x.clean)) {
    lines.push(
      `  file ${o.index} (${o.container}, ${o.mutation}, ${o.ranges ? "ranges" : "no ranges"}, ${o.detail}): ${o.problem}`,
    );
  }
  for (const leak of report.leaks) lines.push(`  leak ${leak}`);
  if (report.crashed) lines.push(`  crash: ${report.crashed}`);
  lines.push(`${report.clean} of ${report.files} files handled cleanly`);
  return lines.join("\n");
}
