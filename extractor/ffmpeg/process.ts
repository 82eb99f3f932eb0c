// The thin shell that runs ffmpeg and ffprobe: its own process group (so a deadline kills
// every thread and helper at once), stderr read line by line with a tail kept for the logs.

import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import type { Readable } from "node:stream";
import { PassThrough } from "node:stream";
import { log } from "../log.ts";
import { mediaIdentity, mediaSpawnOptions } from "../media-sandbox.ts";
import { adoptMediaProcess } from "../priority.ts";

export type MediaTool = "ffmpeg" | "ffprobe";

// The commands to start: the names on the PATH until main.ts sets FFMPEG_PATH/FFPROBE_PATH
// from the parsed settings (extractor/config.ts), once, before any job runs.
let commands: Record<MediaTool, string> = { ffmpeg: "ffmpeg", ffprobe: "ffprobe" };

export function setMediaToolPaths(paths: Record<MediaTool, string>): void {
  commands = { ...paths };
}

export function toolPath(tool: MediaTool): string {
  return commands[tool];
}

const STDERR_TAIL_LINES = 30;

export class MediaToolError extends Error {
  readonly commandLine: string;
  readonly stderrTail: string;
  readonly exitCode: number | null;

  constructor(message: string, commandLine: string, stderrTail: string, exitCode: number | null) {
    super(message);
    this.name = "MediaToolError";
    this.commandLine = commandLine;
    this.stderrTail = stderrTail;
    this.exitCode = exitCode;
  }
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Every stderr line; lines it returns true for are kept out of the tail (e.g. showinfo). */
  onStderrLine?: (line: string) => boolean;
}

export interface RunningTool {
  /** The process (undefined when it could not start). */
  readonly pid?: number;
  readonly commandLine: string;
  /** Settles when the process has exited and stderr is drained. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Settles when stderr has ended: the process is gone, even if stdout is still unread. */
  readonly stderrClosed: Promise<void>;
  stderrTail(): string;
  /** Kills the whole process group; safe to call more than once or after exit. */
  kill(): void;
}

/** A tool whose stdout we read as a stream. */
export interface RunningToolWithOutput extends RunningTool {
  readonly stdout: Readable;
}

/**
 * A media tool's whole environment: the PATH, a locale, and the extractor's own GLIBC_TUNABLES
 * when it has one (huge pages for malloc's large blocks, decision 0374). Nothing else: no
 * secret of the extractor's reaches a process that decodes what strangers send.
 */
export function mediaToolEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return {
    PATH: env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    ...(env.GLIBC_TUNABLES ? { GLIBC_TUNABLES: env.GLIBC_TUNABLES } : {}),
  };
}

/** Made once, at import: every media run gets this same environment. */
export const MEDIA_TOOL_ENV = mediaToolEnv();

export function startTool(
  tool: MediaTool,
  args: string[],
  options: RunOptions = {},
): RunningToolWithOutput {
  const { child, running } = launch(tool, args, "pipe", options);
  if (!child.stdout) throw new Error(`${tool} started without a stdout pipe`);
  // Node resumes (and so discards) a child's unread stdout when the child exits; a run started
  // ahead of time would lose its frames. Piping keeps them (a 'readable' listener would too,
  // but then a later reader never hears of data already buffered), and keeps the backpressure.
  const stdout = child.stdout.pipe(new PassThrough({ highWaterMark: 1024 * 1024 }));
  return { ...running, stdout };
}

/**
 * Starts a tool whose stdout is a socket we already hold (ffmpeg/frame-pipe.ts), so its
 * output never passes through a Node stream. Our copy of that end is closed once spawned.
 */
export function startToolInto(
  tool: MediaTool,
  args: string[],
  stdout: Socket,
  options: RunOptions = {},
): RunningTool {
  try {
    return launch(tool, args, stdout, options).running;
  } finally {
    stdout.destroy();
  }
}

/** The command as a shell would run it, for logs and errors. */
export function commandLineOf(tool: MediaTool, args: string[]): string {
  return [toolPath(tool), ...args.map(shellQuote)].join(" ");
}

function launch(
  tool: MediaTool,
  args: string[],
  stdout: "pipe" | Socket,
  options: RunOptions,
): { child: ChildProcess; running: RunningTool } {
  const commandLine = commandLineOf(tool, args);
  const child = spawn(toolPath(tool), args, {
    // Decoders of untrusted media see no secrets (INTERNAL_TOKEN) and no proxy settings.
    ...mediaSpawnOptions(MEDIA_TOOL_ENV),
    stdio: ["ignore", stdout, "pipe"],
  });
  // Its share of the cores: its run's (extractor/priority.ts).
  const released = child.pid === undefined ? () => {} : adoptMediaProcess(child.pid);
  child.on("close", released);
  const tail: string[] = [];
  let exited = false;
  const kill = () => {
    if (exited || child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const onAbort = () => kill();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) kill();

  let partial = "";
  const stderr = child.stderr;
  if (!stderr) throw new Error(`${tool} started without a stderr pipe`);
  const stderrDone = new Promise<void>((resolve) => {
    stderr.setEncoding("utf8");
    stderr.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) keepLine(line);
    });
    stderr.on("end", () => {
      if (partial) keepLine(partial);
      resolve();
    });
    stderr.on("error", () => resolve());
  });
  function keepLine(line: string) {
    if (options.onStderrLine?.(line) === true) return;
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
  }

  const exitedPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.on("error", (error) => {
        exited = true;
        reject(
          new MediaToolError(`${tool} could not start: ${error.message}`, commandLine, "", null),
        );
      });
      child.on("close", (code, signal) => {
        exited = true;
        options.signal?.removeEventListener("abort", onAbort);
        stderrDone.then(() => resolve({ code, signal }));
      });
    },
  );
  // A spawn failure is reported through `exited`; keep it from surfacing as unhandled first.
  exitedPromise.catch(() => {});

  return {
    child,
    running: {
      pid: child.pid,
      commandLine,
      exited: exitedPromise,
      stderrClosed: stderrDone,
      stderrTail: () => tail.join("\n"),
      kill,
    },
  };
}

/** Runs to completion and returns stdout as text; throws MediaToolError on a non-zero exit. */
export async function runTool(
  tool: MediaTool,
  args: string[],
  options: RunOptions & { maxOutputBytes?: number } = {},
): Promise<string> {
  const running = startTool(tool, args, options);
  const chunks: Buffer[] = [];
  let size = 0;
  const limit = options.maxOutputBytes ?? 64 * 1024 * 1024;
  running.stdout.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) running.kill();
    else chunks.push(chunk);
  });
  const exit = await running.exited;
  if (exit.code !== 0) throw failedRun(tool, running, exit, options.signal);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The error of a run that exited other than 0, logged: stopped at the caller's deadline (its
 * signal aborted), or failed with its exit code or signal.
 */
export function failedRun(
  tool: MediaTool,
  running: RunningTool,
  exit: { code: number | null; signal: NodeJS.Signals | null },
  deadline?: AbortSignal,
): MediaToolError {
  const why = deadline?.aborted ? "was stopped (deadline)" : `failed (${exit.code ?? exit.signal})`;
  const error = new MediaToolError(
    `${tool} ${why}`,
    running.commandLine,
    running.stderrTail(),
    exit.code,
  );
  logToolFailure(error);
  return error;
}

export function logToolFailure(error: MediaToolError): void {
  log("warn", "media tool failed", {
    message: error.message,
    command: error.commandLine,
    stderr: error.stderrTail,
  });
}

/** Checks at start that ffmpeg and ffprobe run, with a message that says what to install. */
export async function checkMediaTools(): Promise<void> {
  for (const tool of ["ffmpeg", "ffprobe"] as const) {
    try {
      await runTool(tool, ["-version"], { maxOutputBytes: 1024 * 1024 });
    } catch (error) {
      const as = mediaIdentity();
      if (as && /EPERM|EACCES/.test(String((error as Error).message))) {
        throw new Error(
          `${tool} cannot be started as the media user ${as.label}: switching users needs ` +
            "root (or CAP_SETUID and CAP_SETGID). Run as root, or set EXTRACTOR_MEDIA_USER=self.",
        );
      }
      throw new Error(
        `${tool} was not found or does not run (looked for "${toolPath(tool)}"). Install it ` +
          `(Debian/Ubuntu: apt-get install -y ffmpeg) or set ${tool.toUpperCase()}_PATH.`,
      );
    }
  }
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}
