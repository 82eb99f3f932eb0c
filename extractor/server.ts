// The extractor's HTTP face (node:http, nothing more is needed):
//   POST /extract  ExtractRequest → runs the job, uploads frames to the edge, posts the
//                  ExtractResult to /internal/results, then answers 200 {status}; 502 when the
//                  result could not be posted (the caller retries); 422 when the edge refused
//                  it (final: running the job again would be refused again); 503 +
//                  Retry-After when every slot is taken, or the request's tenant holds all of
//                  its own (the same answer, so the queue waits without spending a retry).
//   GET  /healthz  → 200.
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { ExtractRequest, ExtractResult } from "../schema/messages.ts";
import { DEADLINE_MESSAGE_START, toJobError, withoutSourceAddress } from "./errors.ts";
import type { ExtractionOutcome } from "./job.ts";
import { DEFAULT_DEADLINE_SECONDS, emptyOutcome, extractFrames } from "./job.ts";
import { log } from "./log.ts";
import { EdgeCallError, EdgeClient, EdgeSink } from "./output/edge-sink.ts";
import { parseExtractRequest } from "./request-schema.ts";
import { nonFiniteNumberIn } from "./result-check.ts";
import type { OpenSource } from "./source-input.ts";

export interface ExtractorServerOptions {
  /** The shared secret the edge sends as `Authorization: Bearer …`. */
  token: string;
  /** Jobs run at once; further requests get 503. */
  concurrency: number;
  /** Jobs one tenant may run at once (default: all of them); further ones get 503 too. */
  tenantSlots?: number;
  deadlineSeconds?: number;
  openSource: OpenSource;
  /** For the edge client (tests). */
  fetch?: typeof fetch;
  /** Seconds a refused caller should wait. */
  retryAfterSeconds?: number;
}

const MAX_BODY_BYTES = 1024 * 1024;

export function createExtractorServer(options: ExtractorServerOptions): Server {
  let running = 0;
  const heldByTenant = new Map<string, number>();
  const tenantSlots = options.tenantSlots ?? options.concurrency;
  const expectedAuth = digest(`Bearer ${options.token}`);
  const { openSource } = options;
  const deadlineSeconds = options.deadlineSeconds ?? DEFAULT_DEADLINE_SECONDS;

  function busy(res: ServerResponse, why: "pool" | "tenant") {
    res.setHeader("retry-after", String(options.retryAfterSeconds ?? 5));
    return reply(res, 503, { error: "busy", why, running, capacity: options.concurrency });
  }

  async function handleExtract(req: IncomingMessage, res: ServerResponse) {
    if (!timingSafeEqual(digest(req.headers.authorization ?? ""), expectedAuth)) {
      return reply(res, 401, { error: "unauthorized" });
    }
    if (running >= options.concurrency) return busy(res, "pool");
    // The slot is taken before the body is read, so two requests cannot both see it free.
    running++;
    let tenant: string | null = null;
    try {
      const body = await readJson(req);
      const parsed = parseExtractRequest(body);
      if (!parsed.ok) return reply(res, 400, { error: "invalid request", issues: parsed.issues });
      const request = parsed.request;
      const named = request.tenant ?? `job:${request.job_id}`;
      const held = heldByTenant.get(named) ?? 0;
      if (held >= tenantSlots) return busy(res, "tenant");
      tenant = named;
      heldByTenant.set(tenant, held + 1);
      const result = await runRequest(request);
      try {
        await edgeClient(request).postResult(result);
      } catch (error) {
        if (refusedForGood(error)) {
          log("error", "the edge refused the result", { job: result.job_id, error: String(error) });
          return reply(res, 422, {
            status: result.status,
            error: `the edge refused the extractor's result (HTTP ${error.status})`,
          });
        }
        log("error", "could not post the result", { job: result.job_id, error: String(error) });
        return reply(res, 502, { status: result.status, error: "result not delivered" });
      }
      reply(res, 200, { status: result.status });
    } catch (error) {
      if (error instanceof BadBody) return reply(res, 400, { error: error.message });
      throw error;
    } finally {
      running--;
      if (tenant !== null) {
        const left = (heldByTenant.get(tenant) ?? 1) - 1;
        if (left > 0) heldByTenant.set(tenant, left);
        else heldByTenant.delete(tenant);
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

  async function runRequest(request: ExtractRequest): Promise<ExtractResult> {
    const attemptId = randomUUID();
    const started = Date.now();
    // Uploads end with the job's deadline (plus a moment to finish the last one); the result
    // itself is posted afterwards by a client without it.
    const uploadsEnd = AbortSignal.timeout((deadlineSeconds + 30) * 1000);
    const sink = new EdgeSink(edgeClient(request, uploadsEnd), {
      kind: request.kind,
      jobId: request.job_id,
      attemptId,
    });
    let outcome: ExtractionOutcome;
    let source: Awaited<ReturnType<OpenSource>> | null = null;
    try {
      source = await openSource(request, { deadlineSeconds });
      outcome = await extractFrames(
        {
          input: source.input,
          options: request.options,
          maxVideoSeconds: request.max_video_seconds,
          clipToMax: request.clip_to_max,
          maxFrames: request.max_frames,
          source,
        },
        sink,
        { deadlineSeconds: Math.max(1, deadlineSeconds - (Date.now() - started) / 1000) },
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

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/healthz") {
      return reply(res, 200, { ok: true, running, capacity: options.concurrency });
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
