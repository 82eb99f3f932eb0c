// How a job reaches the extractor. One attempt = one POST /extract that the extractor answers
// as soon as it has checked the request and taken a slot (202); the job then runs there in the
// background, renewing the attempt's lease, and posts its result to /internal/results.
// Nothing holds a call open for the length of a job, so a job runs as long as its deadline
// needs, whatever a queue consumer's wall-clock limit.
//
// The extractor is a Cloudflare Container in production (the EXTRACTOR binding), a Node
// process at EXTRACTOR_URL locally: one interface, the same request.
import type { ExtractRequest } from "../../schema/messages.ts";
import { edgeConfig } from "../config.ts";
import { jobWaiter } from "../durable/job-waiter.ts";
import { logEvent } from "../log.ts";
import { buildExtractRequest } from "./extract-request.ts";
import { type JobRef, leaseSecondsFor, releaseAttempt, startAttempt } from "./lifecycle.ts";
import { failUnsettled } from "./settlement.ts";

export interface ExtractorClient {
  /** Hands the extractor one attempt; resolves with its answer (202 once it has taken it). */
  extract(request: ExtractRequest, requestId?: string): Promise<Response>;
}

/** Instances in production's container pool (wrangler.toml max_instances). */
export const CONTAINER_POOL_SIZE = 8;

/**
 * The extractor answers /extract before it starts the work: a call this slow means a hung or
 * unreachable extractor, and the attempt is released to be tried again.
 */
const ANSWER_TIMEOUT_MS = 30_000;

function post(
  fetcher: (req: Request) => Promise<Response>,
  base: string,
  token: string,
  request: ExtractRequest,
  requestId: string | undefined,
) {
  return fetcher(
    new Request(`${base}/extract`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(requestId ? { "x-request-id": requestId } : {}),
      },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    }),
  );
}

/**
 * Instances one tenant's jobs spread over (4 of 8). Each instance runs its attempts fairly
 * between tenants and keeps the rest in a bounded room (extractor/scheduler.ts, decision
 * 0190), so one tenant alone may use all of its instances, and never all of the pool.
 */
export const TENANT_INSTANCES = 4;

function fnv1a(text: string): number {
  // Stable and even enough to spread tenants and jobs; nothing here needs to be secret.
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

/**
 * The pool instance a job runs on. A tenant's jobs go to TENANT_INSTANCES neighbouring
 * instances starting at one its name picks (the job id picks among them), so one account or
 * demo client cannot occupy every instance. A job without a tenant goes by its id.
 */
export function poolInstanceFor(request: { job_id: string; tenant?: string | null }): number {
  const byJob = fnv1a(request.job_id);
  if (request.tenant === undefined || request.tenant === null) return byJob % CONTAINER_POOL_SIZE;
  return (fnv1a(request.tenant) + (byJob % TENANT_INSTANCES)) % CONTAINER_POOL_SIZE;
}

function containerName(request: { job_id: string; tenant?: string | null }) {
  return `extractor-${poolInstanceFor(request)}`;
}

export function extractorFor(env: Env): ExtractorClient {
  const { secrets, extractorUrl } = edgeConfig(env);
  const container = env.EXTRACTOR;
  if (container) {
    return {
      extract(request, requestId) {
        const stub = container.get(container.idFromName(containerName(request)));
        return post(
          (req) => stub.fetch(req),
          "http://extractor",
          secrets.internalToken,
          request,
          requestId,
        );
      },
    };
  }
  return {
    extract(request, requestId) {
      // Neither a container binding nor a URL: say which setting is missing, not "invalid URL".
      if (!extractorUrl) throw new Error("EXTRACTOR_URL is not set and there is no EXTRACTOR");
      return post((req) => fetch(req), extractorUrl, secrets.internalToken, request, requestId);
    },
  };
}

/**
 * Production: a container sleeps `sleepAfter` after its last request, and a job that answered
 * 202 holds no request open, so each lease renewal renews the running container's activity
 * timeout (edge/durable/extractor-container.ts). Locally there is no container to keep awake.
 */
export async function keepExtractorAwake(
  env: Env,
  job: { job_id: string; tenant: string | null },
): Promise<void> {
  const container = env.EXTRACTOR;
  if (!container) return;
  await container.get(container.idFromName(containerName(job))).keepAwake();
}

/**
 * A busy extractor (its room full: extractor/scheduler.ts) is no failure: the job is tried
 * again after this, or the Retry-After it sent, spending no attempt.
 */
const BUSY_DELAY_SECONDS = 10;

export type DispatchOutcome =
  | { kind: "accepted"; attemptId: string; leaseSeconds: number }
  /** Another attempt holds a live lease, or the job is settled, gone or out of attempts. */
  | { kind: "not-started" }
  | { kind: "busy"; retryAfterSeconds: number }
  | { kind: "refused"; reason: string }
  | { kind: "failed" };

type CallOutcome = Exclude<DispatchOutcome, { kind: "accepted" } | { kind: "not-started" }>;

/**
 * Starts a new attempt of the job and hands it to the extractor. Decides what the job's state
 * becomes from the answer; the caller decides when the job is looked at again (the jobs queue
 * is the backstop: edge/jobs/backstop.ts).
 */
export async function dispatchJob(
  env: Env,
  job: JobRef,
  context: { requestId?: string } = {},
): Promise<DispatchOutcome> {
  const attemptId = crypto.randomUUID();
  const leaseSeconds = leaseSecondsFor(env);
  if (!(await startAttempt(env, job, attemptId, leaseSeconds))) return { kind: "not-started" };
  if (job.kind === "job") await beginProgress(env, job, attemptId);
  const request = await buildExtractRequest(env, job, attemptId, leaseSeconds).catch(
    async (err) => {
      await releaseAttempt(env, job, attemptId, false);
      throw err;
    },
  );
  if (!request) return { kind: "not-started" };
  const outcome = await callExtractor(extractorFor(env), request, context.requestId);
  logEvent(outcome.kind === "failed" ? "warn" : "info", "job.dispatched", {
    job: job.id,
    attempt: attemptId,
    request: context.requestId,
    kind: job.kind,
    outcome: outcome.kind,
  });
  if (outcome.kind === "accepted") return { kind: "accepted", attemptId, leaseSeconds };
  if (outcome.kind === "busy") await releaseAttempt(env, job, attemptId, true);
  else if (outcome.kind === "failed") await releaseAttempt(env, job, attemptId, false);
  else await failUnsettled(env, job, "ExtractionFailed", outcome.reason);
  return outcome;
}

/**
 * Tells the job's JobWaiter which attempt just started: from now on only its progress reports
 * count (decision 0230). If this fails, its first report finds it in D1 instead
 * (edge/jobs/attempts.ts reportAttemptProgress).
 */
async function beginProgress(env: Env, job: JobRef, attemptId: string) {
  try {
    await jobWaiter(env, job.kind, job.id).begin(attemptId);
  } catch (err) {
    logEvent("warn", "job.progress_not_begun", {
      job: job.id,
      attempt: attemptId,
      error: String(err),
    });
  }
}

async function callExtractor(
  extractor: ExtractorClient,
  request: ExtractRequest,
  requestId: string | undefined,
): Promise<CallOutcome | { kind: "accepted" }> {
  let response: Response;
  try {
    response = await extractor.extract(request, requestId);
  } catch (err) {
    logEvent("warn", "job.dispatch_failed", {
      job: request.job_id,
      attempt: request.attempt_id,
      error: String(err),
    });
    return { kind: "failed" };
  }
  if (response.ok) {
    await response.body?.cancel();
    return { kind: "accepted" };
  }
  if (response.status === 503) {
    await response.body?.cancel();
    const retryAfter = Number(response.headers.get("retry-after"));
    return { kind: "busy", retryAfterSeconds: retryAfter > 0 ? retryAfter : BUSY_DELAY_SECONDS };
  }
  if (response.status >= 400 && response.status < 500) {
    const said = await refusalReason(response);
    return {
      kind: "refused",
      reason: said ?? `the extractor refused the job (HTTP ${response.status})`,
    };
  }
  await response.body?.cancel();
  return { kind: "failed" };
}

/** The extractor's own words for a refusal ({error}), bounded: it ends up in the job's error. */
async function refusalReason(response: Response): Promise<string | null> {
  const text = await response.text().catch(() => "");
  try {
    const said = (JSON.parse(text.slice(0, 4096)) as { error?: unknown }).error;
    return typeof said === "string" && said.length > 0 ? said.slice(0, 300) : null;
  } catch {
    return null;
  }
}
