// Platform links are resolved by yt-dlp (spawned, in its own process group, killed whole at the
// deadline), which only reaches the network through the checking egress proxy. We read its
// JSON, choose the version to fetch ourselves, and map its failures to the spec's errors.
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { mediaSpawnOptions } from "../media-sandbox.ts";
import { startEgressProxy } from "./egress-proxy.ts";
import type { SourceError } from "./errors.ts";
import {
  downloadFailed,
  interruptedDownload,
  linkNotFound,
  noVideoFound,
  privateContent,
  refusedDestination,
} from "./errors.ts";
import type { YtDlpFormat } from "./format-choice.ts";
import { chooseFormat, cookieHeader, isHls } from "./format-choice.ts";
import type { AddressPolicy } from "./policy.ts";
import { platformIdentity } from "./source-identity.ts";

export interface ResolvedMedia {
  url: string;
  /** "hls": a media playlist to join (hls-origin.ts); "file": a file to read by range. */
  kind: "file" | "hls";
  headers: Record<string, string>;
  resolutionNote: string | null;
  formatId: string | null;
  width: number | null;
  height: number | null;
  /** What the platform says about the video, from the same JSON (no second request). */
  info: PlatformInfo;
  /** The platform's own id of the video (`youtube:dQw4w9WgXcQ`), when yt-dlp names one. */
  platformId?: string | null;
}

/** One file a platform offers for a caption track (yt-dlp's subtitles entries). */
export interface SubtitleFile {
  ext: string;
  url: string;
}

/** The part of yt-dlp's info that job.video and captions use; the rest is dropped at once. */
export interface PlatformInfo {
  title: string | null;
  uploader: string | null;
  channel: string | null;
  /** As yt-dlp writes it: YYYYMMDD. */
  upload_date: string | null;
  view_count: number | null;
  webpage_url: string | null;
  /** The video's own language, when the platform says. */
  language: string | null;
  /** The uploader's own tracks by language tag. */
  subtitles: Record<string, SubtitleFile[]>;
  /** The platform's speech-recognised tracks (and their machine translations). */
  automatic_captions: Record<string, SubtitleFile[]>;
}

const MAX_TRACK_LANGUAGES = 300;
const MAX_FILES_PER_TRACK = 20;

/** The fields we use, type-checked: yt-dlp relays what a page said, so any field may be junk. */
export function platformInfo(raw: Record<string, unknown>): PlatformInfo {
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  const count = raw.view_count;
  return {
    title: text(raw.title) ?? text(raw.fulltitle),
    uploader: text(raw.uploader),
    channel: text(raw.channel),
    upload_date: text(raw.upload_date),
    view_count:
      typeof count === "number" && Number.isSafeInteger(count) && count >= 0 ? count : null,
    webpage_url: text(raw.webpage_url),
    language: text(raw.language),
    subtitles: subtitleTracks(raw.subtitles),
    automatic_captions: subtitleTracks(raw.automatic_captions),
  };
}

function subtitleTracks(value: unknown): Record<string, SubtitleFile[]> {
  const tracks: Record<string, SubtitleFile[]> = {};
  if (!value || typeof value !== "object" || Array.isArray(value)) return tracks;
  for (const [language, files] of Object.entries(value).slice(0, MAX_TRACK_LANGUAGES)) {
    if (!Array.isArray(files)) continue;
    const usable = files
      .filter(
        (f): f is SubtitleFile =>
          typeof f?.url === "string" && typeof f?.ext === "string" && /^https?:/i.test(f.url),
      )
      .slice(0, MAX_FILES_PER_TRACK)
      .map((f) => ({ ext: f.ext, url: f.url }));
    if (usable.length > 0) tracks[language] = usable;
  }
  return tracks;
}

export interface YtDlpOptions {
  resolution: number;
  policy: AddressPolicy;
  deadlineMs: number;
  signal?: AbortSignal;
  /** Path of the yt-dlp binary; the configured one (setYtDlpCommand) by default. */
  binary?: string;
}

// The command to start and the arguments added to every call: yt-dlp on the PATH with none
// until main.ts sets STILLS_YTDLP/STILLS_YTDLP_EXTRA_ARGS from the parsed settings
// (extractor/config.ts), once, before any job runs.
let command: { binary: string; extraArgs: string[] } = { binary: "yt-dlp", extraArgs: [] };

export function setYtDlpCommand(binary: string, extraArgs: string[]): void {
  command = { binary, extraArgs: [...extraArgs] };
}

const MAX_JSON_BYTES = 32 * 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;

export async function resolveWithYtDlp(url: string, options: YtDlpOptions): Promise<ResolvedMedia> {
  const proxy = await startEgressProxy(options.policy);
  try {
    const run = await runYtDlp(url, proxy.url, ["--no-playlist", "--dump-single-json"], options);
    if (run.code !== 0 || run.timedOut) {
      if (proxy.refusals.length > 0) throw refusedDestination(proxy.refusals[0]);
      if (run.timedOut)
        throw interruptedDownload(`yt-dlp did not finish within ${options.deadlineMs} ms`);
      throw classifyYtDlpFailure(run.stderr);
    }
    let info: { formats?: YtDlpFormat[]; url?: string } & YtDlpFormat;
    try {
      info = JSON.parse(run.stdout);
    } catch {
      throw downloadFailed("yt-dlp printed something that is not JSON");
    }
    if (!info || typeof info !== "object") throw downloadFailed("yt-dlp printed no info object");
    const formats = info.formats && info.formats.length > 0 ? info.formats : [info];
    const choice = chooseFormat(formats, options.resolution);
    if (choice === "no-video") throw noVideoFound(`yt-dlp found no video stream at ${url}`);
    if (choice === "streaming-only") {
      throw downloadFailed(`only DASH or other streaming versions are offered for ${url}`);
    }
    const { format } = choice;
    return {
      url: format.url as string,
      kind: isHls(format) ? "hls" : "file",
      headers: mediaHeaders(format),
      resolutionNote: choice.note,
      formatId: format.format_id ?? null,
      width: format.width ?? null,
      height: format.height ?? null,
      info: platformInfo(info as Record<string, unknown>),
      platformId: platformIdentity(info as Record<string, unknown>),
    };
  } finally {
    await proxy.close();
  }
}

function mediaHeaders(format: YtDlpFormat): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(format.http_headers ?? {})) {
    if (!/^(host|range|content-length|connection)$/i.test(name))
      headers[name.toLowerCase()] = value;
  }
  const cookie = cookieHeader(format.cookies);
  if (cookie) headers.cookie = cookie;
  return headers;
}

export interface YtDlpRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Stdout passed maxBytes: yt-dlp was killed. */
  overflowed: boolean;
}

/**
 * Runs yt-dlp through the egress proxy with the safe flags, `modeArgs` (what to print) and the
 * configured extra arguments. Stdout past `maxBytes` (32 MiB by default) kills it.
 */
export function runYtDlp(
  url: string,
  proxyUrl: string,
  modeArgs: string[],
  options: { deadlineMs: number; signal?: AbortSignal; binary?: string; maxBytes?: number },
): Promise<YtDlpRun> {
  const maxBytes = options.maxBytes ?? MAX_JSON_BYTES;
  const args = [
    "--ignore-config",
    "--no-cache-dir",
    ...modeArgs,
    "--proxy",
    proxyUrl,
    "--socket-timeout",
    "20",
    "--retries",
    "1",
    "--extractor-retries",
    "1",
    // e.g. "--js-runtimes node": current yt-dlp needs a JS runtime for YouTube (the image sets it).
    ...command.extraArgs,
    "--",
    url,
  ];
  // A bare environment: no proxy variables (no_proxy would bypass --proxy), no user config.
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir(), LANG: "C.UTF-8" };
  const binary = options.binary ?? command.binary;
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      ...mediaSpawnOptions(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let timedOut = false;
    let overflowed = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.deadlineMs);
    const onAbort = () => {
      timedOut = true;
      killGroup();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxBytes) {
        overflowed = true;
        killGroup();
      } else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(downloadFailed(`cannot run yt-dlp (${binary}): ${error.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr,
        timedOut,
        overflowed,
      });
    });
  });
}

const PRIVATE_PATTERNS = [
  /private video|video is private|this (post|account|content) is private/i,
  /sign in to confirm|confirm your age|age[- ]restricted|inappropriate for some users/i,
  /log ?in|sign ?in|login required|requires authentication|registered users|--cookies/i,
  /members[- ]only|join this channel|subscriber[- ]only/i,
  /video unavailable|account (has been )?(terminated|suspended)|content isn't available/i,
  /HTTP Error (401|403)/i,
];
/** Still PrivateContent (the spec's rule for deleted posts), but said as what it is. */
const NOT_FOUND_PATTERNS = [
  /has been removed|no longer available|does not exist|been deleted|not available anymore/i,
  /HTTP Error (404|410)/i,
];
const NO_VIDEO_PATTERNS = [
  /unsupported url/i,
  /no video formats found|no video could be found|no video in this|does not contain (a )?video/i,
  /no media found|requested format is not available|no suitable formats/i,
];

/** yt-dlp's "ERROR: …" lines → the spec's error. Exported for tests. */
export function classifyYtDlpFailure(stderr: string): SourceError {
  const errorLines = stderr.split("\n").filter((line) => line.startsWith("ERROR:"));
  const message = (errorLines.join(" ") || stderr.trim().split("\n").pop() || "no output").slice(
    0,
    500,
  );
  if (
    /unable to download|timed out|connection (refused|reset)|tunnel connection failed|name or service/i.test(
      message,
    ) &&
    !/HTTP Error (401|403|404|410)/i.test(message)
  ) {
    return interruptedDownload(`yt-dlp: ${message}`);
  }
  if (NO_VIDEO_PATTERNS.some((pattern) => pattern.test(message)))
    return noVideoFound(`yt-dlp: ${message}`);
  if (NOT_FOUND_PATTERNS.some((pattern) => pattern.test(message)))
    return linkNotFound(`yt-dlp: the link was not found: ${message}`);
  if (PRIVATE_PATTERNS.some((pattern) => pattern.test(message)))
    return privateContent(`yt-dlp: ${message}`);
  return downloadFailed(`yt-dlp: ${message}`);
}
