// Reading jobs: one job with its frames and file URLs, the newest-first list, and wait=true.
// The REST read routes read through a D1 session that a nearby replica may answer
// (edge/storage/d1-sessions.ts); the two places a lagging replica would give a wrong answer
// go to the primary: a job it does not know yet, and wait=true's re-reads.
// wait=true holds its request on the job's JobWaiter (edge/durable/job-waiter.ts), which
// settlement wakes; it then reads D1 again, so D1 stays the record. A processing job's progress
// is read from that object too, on every read (decision 0230): D1 never holds it.
import type { Progress } from "../../schema/api.ts";
import type { DemoJobRow, FrameRow, JobRow } from "../../schema/db.ts";
import { COMPLETED, EXPIRED, isFinalStatus, PROCESSING } from "../../schema/job-status.ts";
import { type JobOptions, JobOptionsSchema } from "../../schema/messages.ts";
import { edgeConfig } from "../config.ts";
import type { RequestReads } from "../context.ts";
import { jobWaiter } from "../durable/job-waiter.ts";
import { ApiError } from "../errors.ts";
import { type FileLinker, fileLinker, presignSettings } from "../files.ts";
import { logEvent } from "../log.ts";
import { demoJobToApi, filesAreLive, jobToApi } from "../serialize.ts";
import type { D1Reader } from "../storage/prepared-select.ts";
import { demoJobRow } from "./store/demo.ts";
import { frameRowsOf } from "./store/frames.ts";
import { accountJobRow, jobPage, jobWithFrames } from "./store/jobs.ts";

export const WAIT_LIMIT_MS = 50_000;
/**
 * The longest one wait on the JobWaiter lasts before D1 is read again anyway: a wake-up that
 * was lost (the object call failed after the settlement) costs at most this, never the limit.
 */
const WAIT_SLICE_MS = 10_000;

let testClock: { now: () => number; sliceMs: number } | undefined;

/**
 * Lets a test run a wait's 50 s in simulated time, as setLimiterClock does for the rate limits:
 * the wait's deadline is read from `clock`, and each wait on the JobWaiter lasts at most
 * `sliceMs` of real time, so a moved clock is seen within that. Undefined restores the real
 * clock and the 10 s slices.
 */
export function setWaitClock(clock: (() => number) | undefined, sliceMs = 50) {
  testClock = clock ? { now: clock, sliceMs } : undefined;
}

/**
 * A job row's stored options, read back through the schema they were written by. A row whose
 * options do not parse is corrupt: the job cannot be priced or extracted, so this throws.
 */
export function storedJobOptions(jobId: string, stored: unknown): JobOptions {
  const value = typeof stored === "string" ? JSON.parse(stored) : stored;
  const parsed = JobOptionsSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(
    `job ${jobId}: stored options do not parse (${issue?.path.join(".")}: ${issue?.message})`,
  );
}

/**
 * What reading jobs takes of its request, in place of Hono's context (decision 0270): the
 * route adapters and MCP tools build it with readerOf(c) (edge/request.ts).
 */
export interface JobReader {
  env: Env;
  /** The public origin the request came to: file URLs are signed for it. */
  baseUrl(): string;
  /** The request's D1 reads: the binding, or a session a replica may answer. */
  reads: RequestReads;
}

/** A JobReader for one account's jobs (edge/request.ts accountReaderOf). */
export interface AccountJobReader extends JobReader {
  accountId: string;
}

/**
 * What signing a job's URLs needs from the settings, per env object (settings reach an
 * isolate once; a test's own env is another object): reading the settings three times took
 * longer than signing.
 */
const linkSettings = new WeakMap<
  Env,
  { secret: string; publicBaseUrl: string | null; presigned: boolean }
>();

function linkSettingsOf(env: Env) {
  let settings = linkSettings.get(env);
  if (!settings) {
    const config = edgeConfig(env);
    settings = {
      secret: config.secrets.fileUrlSecret,
      publicBaseUrl: config.publicBaseUrl ?? null,
      presigned: presignSettings() !== null,
    };
    linkSettings.set(env, settings);
  }
  return settings;
}

/**
 * URLs the edge signs are a pure function of (secret, origin, expiry, file): a job polled for
 * its URLs is given the same ones, remembered per isolate after its first read. Presigned R2
 * URLs carry the time they were signed and are made anew.
 */
const SIGNED_URLS_MAX = 4096;
const signedUrls = new Map<string, string>();

function linkerFor(
  r: JobReader,
  row: { status: string; expiresAt: string | null },
): FileLinker | null {
  if (!filesAreLive(row) || !row.expiresAt) return null;
  const settings = linkSettingsOf(r.env);
  const origin = settings.publicBaseUrl ?? r.baseUrl();
  const expiresAt = row.expiresAt;
  if (settings.presigned) return fileLinker(settings.secret, origin, expiresAt);
  const prefix = `${settings.secret}\n${origin}\n${expiresAt}\n`;
  let linker: FileLinker | undefined;
  return {
    async url(key) {
      const known = signedUrls.get(prefix + key);
      if (known) return known;
      linker ??= fileLinker(settings.secret, origin, expiresAt);
      const url = await linker.url(key);
      if (signedUrls.size >= SIGNED_URLS_MAX) signedUrls.clear();
      signedUrls.set(prefix + key, url);
      return url;
    },
  };
}

export function jobNotFound(id: string) {
  return new ApiError("JobNotFound", `No job with id ${id}`, {
    userMessage: "We couldn't find that job.",
  });
}

/** The job's row as the primary has it now (wait=true polls here, never on a replica). */
async function findJobOnPrimary(r: AccountJobReader, id: string): Promise<JobRow> {
  const row = await accountJobRow(r.reads.freshPrimary(), id, r.accountId);
  // Another account's job answers exactly like a missing one.
  if (!row) throw jobNotFound(id);
  return row;
}

/** Waits on the job's JobWaiter until `load` returns a settled row or the wait limit passes. */
async function waitUntilFinal<T extends { status: string }>(
  env: Env,
  id: string,
  first: T,
  load: () => Promise<T>,
  limitMs: number,
) {
  const now = testClock?.now ?? Date.now;
  const slice = testClock?.sliceMs ?? WAIT_SLICE_MS;
  const deadline = now() + limitMs;
  const waiter = jobWaiter(env, "job", id);
  let row = first;
  while (!isFinalStatus(row.status) && now() < deadline) {
    await waiter.wait(Math.min(slice, deadline - now()));
    row = await load();
  }
  return row;
}

type JobWithFrames = { row: JobRow; frameList: FrameRow[] };

/**
 * Completed and expired jobs, remembered per isolate once read: nothing changes them any more
 * (a completed job turns expired by its own expires_at, which the serializer already reads as
 * expired; edge/jobs/lifecycle.ts), so a job polled again after it settled costs no D1 trip.
 * Failed jobs are not kept (the cron clears their expires_at). Bounded by the size of what is
 * held (the job and its frames as JSON, a measure of their memory), the oldest going first; a
 * job larger than a tenth of it is not kept. Used only by reads on the plain binding: a
 * request in a D1 session is answered its session's bookmark, which a remembered job cannot
 * give.
 */
const SETTLED_CHARS_MAX = 8_000_000;
const settledJobs = new Map<string, { job: JobWithFrames; size: number }>();
let settledChars = 0;

function rememberSettled(job: JobWithFrames) {
  const { status } = job.row;
  if ((status !== COMPLETED && status !== EXPIRED) || settledJobs.has(job.row.id)) return;
  const size = JSON.stringify(job).length;
  if (size > SETTLED_CHARS_MAX / 10) return;
  for (const [id, old] of settledJobs) {
    if (settledChars + size <= SETTLED_CHARS_MAX) break;
    settledJobs.delete(id);
    settledChars -= old.size;
  }
  settledJobs.set(job.row.id, { job, size });
  settledChars += size;
}

/**
 * Forgets every remembered job: for tests that move a settled job through time by rewriting
 * it in D1 or by running the cron ahead of the clock, which nothing does in production.
 */
export function forgetSettledJobs() {
  settledJobs.clear();
  settledChars = 0;
}

/** The job and its frames in one D1 round trip (none for a job remembered as settled). */
async function findJobWithFrames(r: AccountJobReader, id: string): Promise<JobWithFrames> {
  const { accountId, reads } = r;
  const onPlainBinding = reads.plainBinding();
  const known = onPlainBinding ? settledJobs.get(id)?.job : undefined;
  if (known) {
    // Another account's job answers exactly like a missing one.
    if (known.row.accountId !== accountId) throw jobNotFound(id);
    return known;
  }
  const load = (d1: D1Reader) => jobWithFrames(d1, id, accountId);
  let found = await load(reads.d1());
  // A job created a moment ago may not have reached this replica: the primary decides.
  if (!found.row && reads.mayBeBehind()) {
    reads.freshPrimary();
    found = await load(reads.d1());
  }
  // Another account's job answers exactly like a missing one.
  if (!found.row) throw jobNotFound(id);
  const job = { row: found.row, frameList: found.frameList };
  if (onPlainBinding) rememberSettled(job);
  return job;
}

export async function readJob(r: AccountJobReader, id: string, wait: boolean) {
  let found = await findJobWithFrames(r, id);
  if (wait && !isFinalStatus(found.row.status)) {
    // Re-read on the primary, so the wait never ends on a replica behind the settlement; the
    // final read continues in the session that saw it final (its bookmark covers it).
    const row = await waitUntilFinal(
      r.env,
      id,
      found.row,
      () => findJobOnPrimary(r, id),
      WAIT_LIMIT_MS,
    );
    found = isFinalStatus(row.status) ? await findJobWithFrames(r, id) : { row, frameList: [] };
  }
  const progress = await liveProgress(r.env, found.row);
  return jobToApi(found.row, found.frameList, linkerFor(r, found.row), progress);
}

/** A job's progress as a short line: "extracting, 40 of 120 frames". */
export function progressText(progress: Progress): string {
  const frames =
    progress.frames_total !== null
      ? `, ${progress.frames_done} of ${progress.frames_total} frames`
      : "";
  return `${progress.stage}${frames}`;
}

/**
 * What the job's JobWaiter says its running attempt is doing now, as progressText says it, or
 * null: for a caller already holding the job (MCP's progress notices while it waits).
 */
export async function progressLine(env: Env, jobId: string): Promise<string | null> {
  const progress = await jobWaiter(env, "job", jobId)
    .progress()
    .catch(() => null);
  return progress ? progressText(progress) : null;
}

/**
 * A processing job's progress, as its JobWaiter holds it now (null for any other job, or when
 * the object cannot be reached: the job is still read).
 */
async function liveProgress(env: Env, row: JobRow): Promise<Progress | null> {
  if (row.status !== PROCESSING) return null;
  try {
    return await jobWaiter(env, "job", row.id).progress();
  } catch (err) {
    logEvent("warn", "job.progress_unread", { job: row.id, error: String(err) });
    return null;
  }
}

export async function listJobs(
  r: AccountJobReader,
  query: { limit: number; skip: number; status?: string },
) {
  const { total, rows } = await jobPage(r.reads.db(), r.accountId, query, new Date().toISOString());
  // Rows carry no file URLs (spec §4): read a single job for them. Processing rows carry their
  // progress, one object call each (an account runs at most its plan's max_active_jobs).
  const data = await Promise.all(
    rows.map(async (row) => jobToApi(row, [], null, await liveProgress(r.env, row))),
  );
  return { total, limit: query.limit, skip: query.skip, data };
}

async function findDemo(r: JobReader, id: string): Promise<DemoJobRow> {
  let row = await demoJobRow(r.reads.db(), id);
  // The landing page reads its demo straight after creating it, without a bookmark.
  if (!row && r.reads.mayBeBehind()) row = await demoJobRow(r.reads.freshPrimary(), id);
  if (!row) throw jobNotFound(id);
  return row;
}

export async function readDemoJob(r: JobReader, id: string) {
  const row = await findDemo(r, id);
  // Read after findDemo: the session it switched to (if any) is at least as new as the row.
  return demoJobToApi(row, await frameRowsOf(r.reads.db(), id), linkerFor(r, row));
}
