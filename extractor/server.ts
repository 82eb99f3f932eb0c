// The extractor's HTTP face (node:http, nothing more is needed):
//   POST /extract  ExtractRequest → 202 {accepted, attempt_id, started} as soon as the request
//                  is checked and the scheduler (extractor/scheduler.ts) has taken it: it runs
//                  at once when a slot is free, or waits in a bounded room and starts the moment
//                  a slot frees, fairly between tenants. From acceptance on, the attempt's lease
//                  is renewed every lease_seconds/3 (POST /internal/jobs/{kind}/{id}/lease),
//                  waiting or running; its progress is reported about every second
//                  (POST /internal/jobs/job/{id}/progress: extractor/output/progress-reporter.ts);
//                  frames go to the edge, and the ExtractResult is posted to /internal/results.
//                  A renewal answered 409 means another attempt took the job over (this one was
//                  presumed dead): the attempt is cancelled, or taken out of the room, and posts
//                  nothing.
//                  401 wrong secret, 400 bad request, 503 + Retry-After when the room is full
//                  (or holds all the request's tenant may have waiting): the edge's queue keeps
//                  the job without spending an attempt.
//   GET  /healthz  → 200 {running, waiting, capacity}.
// Nothing holds the edge's call for the length of a job: a job runs as long as its deadline
// needs, and a dead or hung extractor shows up at the edge as a lease that ran out.
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import { chargedPerFrame } from "../schema/billing.ts";
import type { ExtractRequest, ExtractResult } from "../schema/messages.ts";
import { DEADLINE_MESSAGE_START, toJobError, withoutSourceAddress } from "./errors.ts";
import type { ExtractionOutcome } from "./job.ts";
import { DEFAULT_DEADLINE_SECONDS, emptyOutcome, extractFrames } from "./job.ts";
import { log, withLogContext } from "./log.ts";
import {
  EdgeCallError,
  EdgeClient,
  EdgeSink,
  type LeaseLoop,
  renewLeaseLoop,
} from "./output/edge-sink.ts";
import { ProgressReporter } from "./output/progress-reporter.ts";
import { RunPriority, withRunPriority } from "./priority.ts";
import { parseExtractRequest } from "./request-schema.ts";
import { nonFiniteNumberIn } from "./result-check.ts";
import { defaultWaitingLimits, FairScheduler, type Slot } from "./scheduler.ts";
import type { OpenSource } from "./source-input.ts";
import type { Expansion } from "./sources/ytdlp-playlist.ts";
import { Twins, type TwinTurn } from "./twins.ts";

/** How an accepted job ended, for logs and tests. */
export interface JobEnd {
  jobId: string;
  attemptId: string;
  status: ExtractResult["status"];
  /**
   * posted: the edge took the result; refused: it answered 4xx for good; undelivered: it could
   * not be reached (the lease runs out and the edge tries again); cancelled: another attempt
   * took over, nothing was posted (`status` is then "failed" when it never started); reused:
   * the edge settled the job with an earlier job's frames once told the source, nothing was
   * decoded or posted (decision 0350).
   */
  delivery: "posted" | "refused" | "undelivered" | "cancelled" | "reused";
}

export interface ExtractorServerOptions {
  /** The shared secret the edge sends as `Authorization: Bearer …`. */
  token: string;
  /** Attempts run at once; further ones wait for a slot. */
  concurrency: number;
  /** Attempts that may wait for a slot (default 4 × concurrency); further ones get 503. */
  waitingLimit?: number;
  /** Attempts of one tenant that may wait (default half the room); further ones get 503 too. */
  tenantWaitingLimit?: number;
  /** Runs beyond `concurrency` for tenants that run nothing (default `concurrency`). */
  newcomerSlots?: number;
  deadlineSeconds?: number;
  openSource: OpenSource;
  /** For the edge client (tests). */
  fetch?: typeof fetch;
  /** Seconds a refused caller should wait. */
  retryAfterSeconds?: number;
  /**
   * POST /expand: a playlist or channel link → its videos' links (a batch of one link,
   * extractor/sources/ytdlp-playlist.ts). Without it /expand answers 404.
   */
  expandLink?: (url: string, maxEntries: number) => Promise<Expansion>;
  /** Called when an accepted job has ended (tests wait on it). */
  onJobEnd?: (end: JobEnd) => void;
  /** Called when an accepted attempt takes its slot (tests count them and read its share). */
  onJobStart?: (start: {
    jobId: string;
    attemptId: string;
    tenant: string;
    newcomer: boolean;
    priority: RunPriority;
  }) => void;
}

const MAX_BODY_BYTES = 1024 * 1024;

export function createExtractorServer(options: ExtractorServerOptions): Server {
  const room = defaultWaitingLimits(options.concurrency);
  const scheduler = new FairScheduler({
    capacity: options.concurrency,
    waitingLimit: options.waitingLimit ?? room.waitingLimit,
    tenantWaitingLimit: options.tenantWaitingLimit ?? room.tenantWaitingLimit,
    newcomerSlots: options.newcomerSlots ?? room.newcomerSlots,
  });
  const expectedAuth = digest(`Bearer ${options.token}`);
  const { openSource } = options;
  // Each running attempt's share of the cores; while newcomers (runs beyond the slots) run,
  // every other run yields to them (extractor/priority.ts).
  const shares = new Map<RunPriority, { newcomer: boolean }>();
  let newcomers = 0;
  function rebalance() {
    for (const [priority, { newcomer }] of shares) priority.setYielding(newcomers > 0 && !newcomer);
  }
  const deadlineSeconds = options.deadlineSeconds ?? DEFAULT_DEADLINE_SECONDS;
  const twins = new Twins();

  function load() {
    return {
      running: scheduler.running,
      waiting: scheduler.waiting,
      capacity: scheduler.limits.capacity,
    };
  }

  async function handleExtract(req: IncomingMessage, res: ServerResponse) {
    if (!timingSafeEqual(digest(req.headers.authorization ?? ""), expectedAuth)) {
      return reply(res, 401, { error: "unauthorized" });
    }
    let request: ExtractRequest;
    try {
      const parsed = parseExtractRequest(await readJson(req));
      if (!parsed.ok) return reply(res, 400, { error: "invalid request", issues: parsed.issues });
      request = parsed.request;
    } catch (error) {
      if (error instanceof BadBody) return reply(res, 400, { error: error.message });
      throw error;
    }
    const tenant = request.tenant ?? `job:${request.job_id}`;
    const attemptId = request.attempt_id ?? randomUUID();
    const requestId = headerValue(req.headers["x-request-id"]);
    const fields = { job: request.job_id, attempt: attemptId, request: requestId };
    // The attempt's lease is renewed from acceptance, so waiting for a slot never looks like a
    // dead attempt to the edge; losing it cancels the run, or takes the attempt out of the room.
    const cancel = new AbortController();
    let leave: (() => boolean) | null = null;
    // An account's job shows its progress (job.progress); a demo's has nowhere to show it.
    const progress =
      request.attempt_id && request.kind === "job"
        ? new ProgressReporter(progressClient(request), {
            kind: request.kind,
            jobId: request.job_id,
            attemptId,
          })
        : null;
    const lease =
      request.attempt_id && request.lease_seconds
        ? renewLeaseLoop(edgeClient(request), {
            kind: request.kind,
            jobId: request.job_id,
            attemptId,
            everyMs: (request.lease_seconds * 1000) / 3,
            onLost: (why) => {
              log("warn", "job cancelled: its attempt is no longer current", { ...fields, why });
              cancel.abort(new Error(`the attempt was taken over: ${why}`));
              progress?.stop();
              if (leave?.()) {
                options.onJobEnd?.({
                  jobId: request.job_id,
                  attemptId,
                  status: "failed",
                  delivery: "cancelled",
                });
              }
            },
          })
        : null;
    const admission = scheduler.admit(tenant, (slot) => {
      const newcomer = scheduler.running > scheduler.limits.capacity;
      const priority = new RunPriority({ newcomer });
      shares.set(priority, { newcomer });
      if (newcomer) newcomers++;
      rebalance();
      options.onJobStart?.({ jobId: request.job_id, attemptId, tenant, newcomer, priority });
      // Every line the job writes, however deep (sources, ffmpeg, the sink), names it, and
      // every media process it starts takes its share.
      return withLogContext(fields, () =>
        withRunPriority(priority, () =>
          runAttempt(request, attemptId, requestId, cancel.signal, lease, progress, slot),
        ),
      )
        .catch((error) => log("error", "job crashed", { ...fields, error: String(error) }))
        .finally(() => {
          shares.delete(priority);
          if (newcomer) newcomers--;
          rebalance();
        });
    });
    if (admission.kind === "full") {
      void lease?.stop();
      progress?.stop();
      res.setHeader("retry-after", String(options.retryAfterSeconds ?? 2));
      return reply(res, 503, { error: "busy", why: admission.why, ...load() });
    }
    if (admission.kind === "waiting") {
      leave = admission.cancel;
      progress?.stage("waiting");
      log("info", "job waiting for a slot", { event: "job.waiting", ...fields, ...load() });
    }
    reply(res, 202, {
      accepted: true,
      attempt_id: attemptId,
      started: admission.kind === "started",
    });
  }

  /** One accepted attempt, from its start to its posted result (or its cancellation). */
  async function runAttempt(
    request: ExtractRequest,
    attemptId: string,
    requestId: string | undefined,
    cancelled: AbortSignal,
    lease: LeaseLoop | null,
    progress: ProgressReporter | null,
    slot: Slot,
  ) {
    const fields = { job: request.job_id, attempt: attemptId, request: requestId };
    log("info", "job started", { event: "job.started", kind: request.kind, ...fields });
    let end: JobEnd | null = null;
    let twin: TwinTurn | null = null;
    // The job's deadline runs from here: a wait for its twin counts.
    const started = Date.now();
    try {
      // The same account's identical job running here ends first; this one is then served its
      // frames (decision 0384).
      const twinKey = Twins.keyOf(request);
      if (twinKey) {
        twin = await twins.enter(twinKey, request.job_id, slot.idle, cancelled, () =>
          progress?.stage("waiting"),
        );
        if (twin.waitedFor) {
          log("info", "job waited for its twin", { ...fields, twin: twin.waitedFor });
        }
        if (cancelled.aborted) {
          end = { jobId: request.job_id, attemptId, status: "failed", delivery: "cancelled" };
          return;
        }
      }
      progress?.stage("fetching");
      const result = await runRequest(request, attemptId, cancelled, {
        lease,
        progress,
        slot,
        twin,
        started,
      });
      if ("reused_from" in result) {
        end = { jobId: request.job_id, attemptId, status: "completed", delivery: "reused" };
        log("info", "job reused an earlier job's frames", {
          ...fields,
          reused_from: result.reused_from,
        });
        return;
      }
      if (cancelled.aborted) {
        end = { jobId: request.job_id, attemptId, status: result.status, delivery: "cancelled" };
        return;
      }
      end = { jobId: request.job_id, attemptId, status: result.status, delivery: "posted" };
      // Every frame of a completed result counts in its frames_count, those in error too.
      await progress?.finish(result.frames.length, result.status === "completed");
      try {
        await edgeClient(request).postResult(result);
      } catch (error) {
        end.delivery = refusedForGood(error) ? "refused" : "undelivered";
        log(
          "error",
          end.delivery === "refused" ? "the edge refused the result" : "could not post the result",
          {
            ...fields,
            error: String(error),
          },
        );
      }
    } finally {
      twin?.leave();
      // A renewal already sent is answered (or 5 s pass) before the job reports its end and
      // frees its slot. The result may still have been posted before that answer came.
      await lease?.stop();
      progress?.stop();
      if (end) {
        log("info", "job ended", {
          event: "job.ended",
          ...fields,
          status: end.status,
          delivery: end.delivery,
        });
        options.onJobEnd?.(end);
      }
    }
  }

  function edgeClient(request: ExtractRequest, signal?: AbortSignal): EdgeClient {
    return new EdgeClient({
      baseUrl: request.callback.base_url,
      token: request.callback.token,
      fetch: options.fetch,
      signal,
    });
  }

  /** Progress reports are light and frequent: one try each, soon given up. */
  function progressClient(request: ExtractRequest): EdgeClient {
    return new EdgeClient({
      baseUrl: request.callback.base_url,
      token: request.callback.token,
      fetch: options.fetch,
      attempts: 1,
      requestTimeoutMs: 5_000,
    });
  }

  async function runRequest(
    request: ExtractRequest,
    attemptId: string,
    cancelled: AbortSignal,
    run: {
      lease: LeaseLoop | null;
      progress: ProgressReporter | null;
      slot: Slot;
      twin: TwinTurn | null;
      /** When the job's deadline started (ms since the epoch). */
      started: number;
    },
  ): Promise<ExtractResult | { reused_from: string }> {
    const { lease, progress, slot, twin, started } = run;
    // Uploads end with the job's deadline (plus a moment to finish the last one), or when the
    // attempt is taken over; the result itself is posted afterwards by a client without it.
    const uploadsEnd = AbortSignal.any([
      AbortSignal.timeout((deadlineSeconds + 30) * 1000),
      cancelled,
    ]);
    const sink = new EdgeSink(edgeClient(request, uploadsEnd), {
      kind: request.kind,
      jobId: request.job_id,
      attemptId,
    });
    let outcome: ExtractionOutcome;
    let source: Awaited<ReturnType<OpenSource>> | null = null;
    try {
      source = await openSource(request, { deadlineSeconds });
      // A source no twin could be served (decision 0384): its twins need not wait.
      if (!Twins.mayServe(source.identity, request.url)) twin?.leave();
      const reusedFrom = await reuseAnswer(request, attemptId, source);
      if (reusedFrom !== null) return { reused_from: reusedFrom };
      outcome = await extractFrames(
        {
          input: source.input,
          options: request.options,
          maxVideoSeconds: request.max_video_seconds,
          clipToMax: request.clip_to_max,
          maxFrames: request.max_frames,
          source,
          trace: { job: request.job_id, attempt: attemptId },
        },
        sink,
        {
          deadlineSeconds: Math.max(1, deadlineSeconds - (Date.now() - started) / 1000),
          signal: cancelled,
          progress: progress ?? undefined,
          idle: slot.idle,
          // A job charged per minute tells the edge its span at once: if that alone costs
          // more than the account can pay, the edge ends the job and its 409 cancels this
          // attempt before it decodes (edge/jobs/lifecycle.ts stopIfUnaffordable).
          onPlanned: ({ processedSeconds }) => {
            if (request.kind === "job" && !chargedPerFrame(request.options.mode)) {
              lease?.renewNow({ processed_seconds: processedSeconds });
            }
          },
        },
      );
      // When ffmpeg failed because the download did, the source knows the real reason; but a
      // job that ran out of time says so, even if its source was cut off at the same moment.
      const sourceFailure = source.failure?.();
      if (outcome.status === "failed" && sourceFailure && !ranOutOfTime(outcome.error)) {
        outcome.error = toJobError(sourceFailure);
      }
      outcome.resolution_note ??= source.resolutionNote ?? null;
    } catch (error) {
      outcome = failedOutcome(request, error);
    } finally {
      await source?.close().catch(() => {});
    }
    // ffmpeg names its input in errors, and a relay's address is a secret while it serves.
    if (outcome.error && source) {
      outcome.error.message = withoutSourceAddress(outcome.error.message, source.input);
    }
    const unfit = nonFiniteNumberIn(outcome);
    if (unfit) {
      outcome = failedOutcome(
        request,
        new Error(`the result held a number JSON cannot carry (${unfit})`),
      );
    }
    log("info", "job finished", {
      event: "extraction.finished",
      job: request.job_id,
      attempt: attemptId,
      status: outcome.status,
      error: outcome.error?.name,
      frames: outcome.frames.length,
      bytes_read: source?.bytesRead(),
      seconds: (Date.now() - started) / 1000,
    });
    return { job_id: request.job_id, kind: request.kind, attempt_id: attemptId, ...outcome };
  }

  /**
   * An account's job tells the edge what its opened source is before decoding anything; the
   * edge may settle it with the account's earlier job of the same source and options (decision
   * 0350). Any failure here only means no reuse: the job extracts as it always did.
   */
  async function reuseAnswer(
    request: ExtractRequest,
    attemptId: string,
    source: Awaited<ReturnType<OpenSource>>,
  ): Promise<string | null> {
    if (request.kind !== "job" || !request.attempt_id || !source.identity) return null;
    try {
      const answer = await edgeClient(request).reportSource(request.job_id, {
        attempt_id: attemptId,
        source: source.identity,
      });
      return answer.reused_from;
    } catch (error) {
      log("warn", "source report failed; extracting", { error: String(error) });
      return null;
    }
  }

  /** POST /expand {url, max_entries} → 200 Expansion, or 422 {error: JobError} (the link's fault). */
  async function handleExpand(req: IncomingMessage, res: ServerResponse) {
    if (!timingSafeEqual(digest(req.headers.authorization ?? ""), expectedAuth)) {
      return reply(res, 401, { error: "unauthorized" });
    }
    const expandLink = options.expandLink;
    if (!expandLink) return reply(res, 404, { error: "not found" });
    let body: { url?: unknown; max_entries?: unknown };
    try {
      body = (await readJson(req)) as typeof body;
    } catch (error) {
      if (error instanceof BadBody) return reply(res, 400, { error: error.message });
      throw error;
    }
    const { url, max_entries: max } = body ?? {};
    if (
      typeof url !== "string" ||
      typeof max !== "number" ||
      !Number.isSafeInteger(max) ||
      max < 1 ||
      max > 1000
    ) {
      return reply(res, 400, { error: "invalid request: url (string) and max_entries (1-1000)" });
    }
    try {
      return reply(res, 200, await expandLink(url, max));
    } catch (error) {
      const jobError = toJobError(error);
      log("info", "expand failed", { error: jobError.message });
      return reply(res, 422, { error: jobError });
    }
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "POST" && path === "/expand") {
      handleExpand(req, res).catch((error) => {
        log("error", "expand request failed", { error: String(error) });
        if (!res.headersSent) reply(res, 500, { error: "internal error" });
      });
      return;
    }
    if (req.method === "GET" && path === "/healthz") {
      return reply(res, 200, { ok: true, ...load() });
    }
    if (req.method === "POST" && path === "/extract") {
      handleExtract(req, res).catch((error) => {
        log("error", "extract request failed", { error: String(error) });
        if (!res.headersSent) reply(res, 500, { error: "internal error" });
      });
      return;
    }
    reply(res, 404, { error: "not found" });
  });
  // A job may legitimately take many minutes; Node's default would cut it at 5.
  server.requestTimeout = 0;
  server.headersTimeout = 30_000;
  return server;
}

/**
 * A 4xx (other than 408 and 429, which ask to come back) is the edge's final word on this
 * result: posting it again, or running the job again, would meet the same refusal.
 */
function refusedForGood(error: unknown): error is EdgeCallError & { status: number } {
  if (!(error instanceof EdgeCallError) || error.status === null) return false;
  return error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;
}

function ranOutOfTime(error: ExtractionOutcome["error"]): boolean {
  return error?.message.startsWith(DEADLINE_MESSAGE_START) ?? false;
}

function failedOutcome(request: ExtractRequest, error: unknown): ExtractionOutcome {
  return { ...emptyOutcome(request.options), error: toJobError(error) };
}

class BadBody extends Error {}

function headerValue(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  // Only for log lines: bounded, and nothing that could break a JSON line's reader.
  return first && /^[\w.:-]{1,128}$/.test(first) ? first : undefined;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadBody("body too large");
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new BadBody("body is not JSON");
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

// Hashing first gives equal lengths, which timingSafeEqual needs, whatever was sent.
function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
