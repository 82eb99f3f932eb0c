// The `stills` commands. Each takes its parsed flags and returns an exit code; errors thrown
// here are turned into messages and exit codes by run() in ../cli.ts.
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { Stills } from "../client.ts";
import { StillsError } from "../errors.ts";
import type { DownloadedFile } from "../frames.ts";
import { envVar } from "../runtime.ts";
import type { CreateJobRequest, Job } from "../types.ts";
import { configFile, readConfig, removeConfig, writeConfig } from "./config.ts";
import { EXIT, NoKeyError, UsageError } from "./exit-codes.ts";
import { ProgressLine } from "./progress.ts";

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

function parse<const T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true as const });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function client(): Promise<Stills> {
  const apiKey = envVar("STILLS_API_KEY") || (await readConfig()).api_key;
  if (!apiKey) {
    throw new NoKeyError("no API key: set STILLS_API_KEY or run `stills login`");
  }
  return new Stills({ apiKey });
}

function number(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === "" || !Number.isFinite(parsed)) {
    throw new UsageError(`--${flag} takes a number; got ${JSON.stringify(value)}`);
  }
  return parsed;
}

function print(io: Io, value: unknown) {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export async function framesCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    count: { type: "string" },
    every: { type: "string" },
    at: { type: "string" },
    scenes: { type: "boolean" },
    keyframes: { type: "boolean" },
    best: { type: "boolean" },
    animated: { type: "string" },
    "animated-start": { type: "string" },
    "animated-duration": { type: "string" },
    start: { type: "string" },
    end: { type: "string" },
    format: { type: "string" },
    resolution: { type: "string" },
    zip: { type: "boolean" },
    output: { type: "string", short: "o" },
    timeout: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length !== 1) {
    throw new UsageError("stills frames takes one video URL (see stills frames --help)");
  }
  // --best takes --count as how many (default 1), so the two go together.
  const chosen = ["count", "every", "at", "scenes", "keyframes", "best"].filter(
    (flag) =>
      values[flag as keyof typeof values] !== undefined && !(flag === "count" && values.best),
  );
  if (chosen.length > 1) {
    throw new UsageError(`choose one of --${chosen.join(", --")}`);
  }
  const body: CreateJobRequest = { url: positionals[0] };
  if (values.count !== undefined) body.count = number("count", values.count);
  if (values.every !== undefined) body.every = number("every", values.every);
  if (values.at !== undefined) {
    body.timestamps = values.at.split(",").map((t) => number("at", t) as number);
  }
  if (values.scenes) body.mode = "scenes";
  if (values.keyframes) body.mode = "keyframes";
  if (values.best) body.mode = "best";
  if (values.animated !== undefined) {
    if (values.animated !== "webp" && values.animated !== "gif") {
      throw new UsageError(`--animated takes webp or gif; got ${JSON.stringify(values.animated)}`);
    }
    body.animated = {
      format: values.animated,
      start: number("animated-start", values["animated-start"]),
      duration: number("animated-duration", values["animated-duration"]),
    };
  } else if (values["animated-start"] !== undefined || values["animated-duration"] !== undefined) {
    throw new UsageError("--animated-start and --animated-duration need --animated webp|gif");
  }
  if (values.start !== undefined) body.start = number("start", values.start);
  if (values.end !== undefined) body.end = number("end", values.end);
  if (values.format !== undefined) body.format = values.format as CreateJobRequest["format"];
  if (values.resolution !== undefined) {
    body.resolution = values.resolution as CreateJobRequest["resolution"];
  }
  if (values.zip) body.output = "both";
  const timeoutSeconds = number("timeout", values.timeout) ?? 600;

  const stills = await client();
  const progress = new ProgressLine(io.stderr);
  const job = await stills.jobs.create(body, {
    wait: {
      timeout: timeoutSeconds * 1000,
      // Polling (rather than the server's long wait) only when there is a bar to move.
      onProgress: progress.enabled ? (current) => progress.job(current) : undefined,
    },
  });
  progress.done();
  if (job.status !== "completed") return reportUnfinished(job, io, values.json);

  const dir = values.output ?? `stills-${job.id}`;
  const files: DownloadedFile[] = await stills.frames.download(job, dir, {
    onFile: (_file, done, total) => progress.downloads(done, total),
  });
  if (values.zip) {
    const zip = await stills.frames.downloadZip(job, dir);
    if (zip) files.push(zip);
  }
  const preview = await stills.frames.downloadPreview(job, dir);
  if (preview) files.push(preview);
  progress.done();
  if (values.json) {
    print(io, { job, files });
  } else {
    for (const file of files) io.stdout.write(`${file.path}\n`);
    const credits = job.credits_charged ?? 0;
    io.stderr.write(
      `${job.frames_count ?? files.length} frames in ${dir} · ${credits} credit${credits === 1 ? "" : "s"} · job ${job.id}\n`,
    );
  }
  return EXIT.done;
}

function reportUnfinished(job: Job, io: Io, json: boolean | undefined): number {
  if (json) print(io, { job, files: [] });
  const why = job.error
    ? `${job.error.userMessage} (${job.error.name}: ${job.error.message})`
    : `the job is ${job.status}`;
  io.stderr.write(`stills: job ${job.id} ${job.status}: ${why}\n`);
  return EXIT.failed;
}

export async function jobsCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "list") return jobsList(rest, io);
  if (sub === "get") return jobsGet(rest, io);
  throw new UsageError(
    sub ? `unknown command: stills jobs ${sub}` : "stills jobs needs a command: list or get",
  );
}

async function jobsList(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    status: { type: "string" },
    limit: { type: "string" },
    all: { type: "boolean" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) throw new UsageError("stills jobs list takes no arguments");
  const limit = values.all ? Number.POSITIVE_INFINITY : (number("limit", values.limit) ?? 20);
  const stills = await client();
  const jobs: Job[] = [];
  const pager = stills.jobs.list({
    status: values.status as Job["status"] as never,
    limit: Number.isFinite(limit) ? Math.min(100, limit) : 100,
  });
  for await (const job of pager) {
    if (jobs.length >= limit) break;
    jobs.push(job);
  }
  if (values.json) {
    print(io, jobs);
    return EXIT.done;
  }
  if (jobs.length === 0) {
    io.stderr.write("No jobs yet. Try: stills frames <video url> --count 6\n");
    return EXIT.done;
  }
  const rows = jobs.map((job) => [
    job.id,
    job.status,
    job.created_at.replace("T", " ").slice(0, 19),
    String(job.frames_count ?? "-"),
    String(job.credits_charged ?? "-"),
    job.url,
  ]);
  io.stdout.write(table(["ID", "STATUS", "CREATED (UTC)", "FRAMES", "CREDITS", "URL"], rows));
  return EXIT.done;
}

async function jobsGet(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    wait: { type: "boolean" },
    json: { type: "boolean" },
  });
  if (positionals.length !== 1) throw new UsageError("stills jobs get takes one job id");
  const stills = await client();
  const progress = new ProgressLine(io.stderr);
  const job = await stills.jobs.get(positionals[0], {
    wait: values.wait
      ? { onProgress: progress.enabled ? (current) => progress.job(current) : undefined }
      : false,
  });
  progress.done();
  if (values.json) {
    print(io, job);
  } else {
    const lines = [
      `id        ${job.id}`,
      `status    ${job.status}`,
      `url       ${job.url}`,
      `created   ${job.created_at}`,
      `frames    ${job.frames_count ?? "-"}${job.frames_failed ? ` (${job.frames_failed} failed)` : ""}`,
      `credits   ${job.credits_charged ?? "-"}`,
    ];
    if (job.error) lines.push(`error     ${job.error.name}: ${job.error.userMessage}`);
    if (job.zip_url) lines.push(`zip       ${job.zip_url}`);
    for (const frame of job.frames) {
      lines.push(
        `  #${frame.index} ${frame.timestamp}s ${frame.url ?? frame.error ?? frame.status}`,
      );
    }
    io.stdout.write(`${lines.join("\n")}\n`);
  }
  return job.status === "failed" || job.status === "expired" ? EXIT.failed : EXIT.done;
}

export async function usageCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: "boolean" } });
  if (positionals.length > 0) throw new UsageError("stills usage takes no arguments");
  const usage = await (await client()).usage();
  if (values.json) {
    print(io, usage);
    return EXIT.done;
  }
  const { credits, limits, period } = usage;
  io.stdout.write(
    [
      `plan       ${usage.plan}`,
      `credits    ${credits.available} available (${credits.plan} plan, ${credits.pack} pack; ${credits.monthly_allowance} a month)`,
      `period     ${period.start ?? "-"} to ${period.end ?? "-"}`,
      `limits     ${limits.max_video_minutes} min videos, ${limits.max_frames_per_job} frames a job, ${limits.max_active_jobs} jobs at once, ${limits.requests_per_minute} requests a minute`,
    ]
      .map((line) => `${line}\n`)
      .join(""),
  );
  return EXIT.done;
}

export async function loginCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { key: { type: "string" } });
  if (positionals.length > 0) throw new UsageError("stills login takes no arguments (use --key)");
  const key = (values.key ?? (await readKey(io))).trim();
  if (!key) throw new UsageError("no key given");
  // Checked before it is stored: a mistyped key should fail here, not at the next command.
  const usage = await new Stills({ apiKey: key }).usage();
  const file = configFile();
  await writeConfig({ ...(await readConfig(file)), api_key: key }, file);
  io.stderr.write(
    `Saved the key in ${file} (${usage.plan} plan, ${usage.credits.available} credits).\n`,
  );
  if (envVar("STILLS_API_KEY")) {
    io.stderr.write("Note: STILLS_API_KEY is set, and is used instead while it is.\n");
  }
  return EXIT.done;
}

export async function logoutCommand(args: string[], io: Io): Promise<number> {
  if (args.length > 0) throw new UsageError("stills logout takes no arguments");
  await removeConfig();
  io.stderr.write(`Removed ${configFile()}.\n`);
  return EXIT.done;
}

/** The key from a prompt (not echoed) on a terminal, else stdin's first line. */
async function readKey(io: Io): Promise<string> {
  if (!io.stdin.isTTY) {
    let text = "";
    for await (const chunk of io.stdin) text += chunk.toString();
    return text.split("\n")[0] ?? "";
  }
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  io.stderr.write("API key (from the dashboard's Keys page): ");
  // Mute the echo: the key should not stay on screen or in a terminal's scrollback.
  (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => {};
  const key = await new Promise<string>((resolve) => rl.question("", resolve));
  rl.close();
  io.stderr.write("\n");
  return key;
}

function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  return `${all
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join("  "),
    )
    .join("\n")}\n`;
}

export { StillsError };
