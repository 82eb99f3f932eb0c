// The extractor's settings, read once from the environment at start and passed down. Every
// variable is listed here, with its default; a bad value stops the start with its name.
import { readFileSync } from "node:fs";
import { availableParallelism, totalmem } from "node:os";
import { z } from "zod";
import type { LogSetting } from "./log.ts";
import { DEFAULT_MEDIA_NICE } from "./priority.ts";
import { defaultWaitingLimits } from "./scheduler.ts";
import type { MinimumRate } from "./sources/minimum-rate.ts";

export interface ExtractorConfig {
  /** Shared secret the edge sends as `Authorization: Bearer …`. */
  token: string;
  host: string;
  port: number;
  /** Attempts run at once (extractor/scheduler.ts); more wait for a slot. */
  concurrency: number;
  /** Attempts that may wait for a slot; more answer 503 and the queue keeps them. */
  waitingLimit: number;
  /** Attempts of one tenant (an account, a demo client) that may wait. */
  tenantWaitingLimit: number;
  /** Runs beyond `concurrency` for a tenant that runs nothing, so it never waits behind others. */
  newcomerSlots: number;
  /** Niceness of every media process (extractor/priority.ts). */
  mediaNice: number;
  /** Wall-clock budget of one job. */
  deadlineSeconds: number;
  /** Bytes one job may take from origins. */
  maxSourceBytes: number;
  allowPrivate: boolean;
  /** What a source must keep sending while it is read (sources/minimum-rate.ts). */
  sourceMinRate: MinimumRate;
  /** EXTRACTOR_MEDIA_USER as given: who runs ffmpeg and yt-dlp (media-sandbox.ts). */
  mediaUser: string | undefined;
  /** FFMPEG_PATH and FFPROBE_PATH, else the names found on the PATH. */
  mediaTools: { ffmpeg: string; ffprobe: string };
  /** STILLS_YTDLP (`npm start` passes a current one: scripts/lib/ytdlp.mjs), else yt-dlp on the PATH. */
  ytdlp: string;
  /** STILLS_YTDLP_EXTRA_ARGS split on spaces: added to every yt-dlp call (e.g. a proxy). */
  ytdlpExtraArgs: string[];
  /** EXTRACTOR_LOG: the lowest level logged. */
  logLevel: LogSetting;
  /**
   * EXTRACTOR_STOP_WITH_PARENT=1: stdin is a pipe the process that started us holds open (the
   * local stack, scripts/lib/stack.mjs); stop when it closes, as on SIGTERM.
   */
  stopWithParent: boolean;
}

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const seconds = (fallback: number) => z.coerce.number().positive().max(86_400).default(fallback);

const environment = z.object({
  INTERNAL_TOKEN: z.string({
    error: "is not set: the extractor refuses to run without its shared secret",
  }),
  EXTRACTOR_HOST: z.string().default("127.0.0.1"),
  EXTRACTOR_PORT: z.coerce.number().int().min(1).max(65_535).default(8788),
  EXTRACTOR_CONCURRENCY: z.coerce.number().int().min(1).optional(),
  EXTRACTOR_WAITING_LIMIT: z.coerce.number().int().min(0).optional(),
  EXTRACTOR_TENANT_WAITING_LIMIT: z.coerce.number().int().min(0).optional(),
  EXTRACTOR_NEWCOMER_SLOTS: z.coerce.number().int().min(0).optional(),
  EXTRACTOR_MEDIA_NICE: z.coerce.number().int().min(0).max(19).default(DEFAULT_MEDIA_NICE),
  EXTRACTOR_JOB_TIMEOUT_SECONDS: seconds(900),
  EXTRACTOR_MAX_SOURCE_BYTES: count(4 * 1024 ** 3),
  STILLS_ALLOW_PRIVATE_NETWORK: z.enum(["0", "1"]).default("0"),
  EXTRACTOR_SOURCE_GRACE_SECONDS: seconds(10),
  EXTRACTOR_SOURCE_RATE_WINDOW_SECONDS: seconds(10),
  EXTRACTOR_SOURCE_MIN_BYTES_PER_SECOND: z.coerce
    .number()
    .min(0)
    .default(32 * 1024),
  EXTRACTOR_MEDIA_USER: z.string().optional(),
  FFMPEG_PATH: z.string().default("ffmpeg"),
  FFPROBE_PATH: z.string().default("ffprobe"),
  STILLS_YTDLP: z.string().default("yt-dlp"),
  STILLS_YTDLP_EXTRA_ARGS: z.string().default(""),
  EXTRACTOR_LOG: z.enum(["debug", "info", "silent"]).default("info"),
  EXTRACTOR_STOP_WITH_PARENT: z.enum(["0", "1"]).default("0"),
});

/** The memory this process may use: the machine's, or its cgroup's limit when lower. */
function memoryBytes(): number {
  try {
    const limit = Number(readFileSync("/sys/fs/cgroup/memory.max", "utf8").trim());
    if (Number.isFinite(limit) && limit > 0) return Math.min(limit, totalmem());
  } catch {
    // No cgroup v2 limit to read ("max" reads as NaN above): the machine's memory it is.
  }
  return totalmem();
}

/** Memory one running attempt may need at worst (a 4K `skip` job peaks near 500 MB). */
const MEMORY_PER_SLOT = 512 * 1024 ** 2;

/**
 * One attempt per core: a job's decode already keeps a core busy, and more at once only
 * shares the same cores out slower. Memory caps it where the cores outnumber half-gigabytes.
 */
export function defaultConcurrency(cores: number, memoryBytes: number): number {
  return Math.max(1, Math.min(cores, Math.floor(memoryBytes / MEMORY_PER_SLOT)));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ExtractorConfig {
  // An empty variable means "not set", as in a shell's FOO= .
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const parsed = environment.safeParse(given);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`);
    throw new Error(`extractor settings: ${problems.join("; ")}`);
  }
  const e = parsed.data;
  const concurrency =
    e.EXTRACTOR_CONCURRENCY ?? defaultConcurrency(availableParallelism(), memoryBytes());
  const room = defaultWaitingLimits(concurrency);
  return {
    token: e.INTERNAL_TOKEN,
    host: e.EXTRACTOR_HOST,
    port: e.EXTRACTOR_PORT,
    concurrency,
    waitingLimit: e.EXTRACTOR_WAITING_LIMIT ?? room.waitingLimit,
    tenantWaitingLimit: e.EXTRACTOR_TENANT_WAITING_LIMIT ?? room.tenantWaitingLimit,
    newcomerSlots: e.EXTRACTOR_NEWCOMER_SLOTS ?? room.newcomerSlots,
    mediaNice: e.EXTRACTOR_MEDIA_NICE,
    deadlineSeconds: e.EXTRACTOR_JOB_TIMEOUT_SECONDS,
    maxSourceBytes: e.EXTRACTOR_MAX_SOURCE_BYTES,
    allowPrivate: e.STILLS_ALLOW_PRIVATE_NETWORK === "1",
    sourceMinRate: {
      graceMs: e.EXTRACTOR_SOURCE_GRACE_SECONDS * 1000,
      windowMs: e.EXTRACTOR_SOURCE_RATE_WINDOW_SECONDS * 1000,
      bytesPerSecond: e.EXTRACTOR_SOURCE_MIN_BYTES_PER_SECOND,
    },
    mediaUser: e.EXTRACTOR_MEDIA_USER,
    mediaTools: { ffmpeg: e.FFMPEG_PATH, ffprobe: e.FFPROBE_PATH },
    ytdlp: e.STILLS_YTDLP,
    ytdlpExtraArgs: e.STILLS_YTDLP_EXTRA_ARGS.split(/\s+/).filter(Boolean),
    logLevel: e.EXTRACTOR_LOG,
    stopWithParent: e.EXTRACTOR_STOP_WITH_PARENT === "1",
  };
}
