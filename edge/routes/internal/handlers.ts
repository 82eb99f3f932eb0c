// What the extractor calls: frame and ZIP uploads into R2, lease renewals of its attempt, and
// its result, which is settled here and then (edge/queues/results.ts). Every call carries the
// token the edge issued for one attempt of one job (edge/jobs/attempt-token.ts): a file key
// must lie under that attempt's {kind}/{job_id}/{attempt_id}/, a renewal must name that
// attempt, a result must be that attempt's. Files land only under a job that is still unsettled.
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { type ZodError, z } from "zod";
import { demoJobs, jobs } from "../../../schema/db.ts";
import { parseFileKey, parseUploadKey } from "../../../schema/job-files.ts";
import { UNSETTLED_STATUSES } from "../../../schema/job-status.ts";
import {
  type ExtractResult,
  ExtractResultSchema,
  JOB_KINDS,
  LeaseRenewalSchema,
  type ResultMessage,
} from "../../../schema/messages.ts";
import { PLANS } from "../../../schema/plans.ts";
import { edgeConfig } from "../../config.ts";
import type { AppEnv } from "../../context.ts";
import { hmacSha256, timingSafeEqualHex, toHex } from "../../crypto.ts";
import { keepExtractorAwake } from "../../dispatch.ts";
import { contentTypeOf } from "../../files.ts";
import { type AttemptClaim, verifyAttemptToken } from "../../jobs/attempt-token.ts";
import { tenantOf } from "../../jobs/extract-request.ts";
import {
  leaseIsLive,
  leaseSecondsFor,
  readAttemptState,
  renewLease,
} from "../../jobs/lifecycle.ts";
import { storedJobOptions } from "../../jobs/read.ts";
import { failUnsettled, settle, stopIfUnaffordable } from "../../jobs/settlement.ts";
import { logEvent } from "../../log.ts";
import { planOf } from "../../plan-of.ts";
import { mostFramesFor, resultMismatch } from "./result.ts";

const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** A ZIP's parts as the extractor lists them when it completes the upload, each part once. */
const CompletedParts = z.object({
  parts: z
    .array(z.object({ part: z.number().int().min(1).max(10_000), etag: z.string().max(200) }))
    .min(1)
    .max(10_000)
    .refine((parts) => new Set(parts.map((p) => p.part)).size === parts.length, {
      message: "a part is listed twice",
    }),
});

/** Just enough of a posted result to know whose token it needs; the rest is checked after. */
const ResultClaim = z.object({
  kind: z.enum(JOB_KINDS),
  job_id: z.string().max(100),
  attempt_id: z.string().max(64),
});

export type InternalEnv = AppEnv & {
  Variables: { fileKey: string; filePrefix: string; claim: AttemptClaim };
};

/** True when the request's bearer token was issued for exactly this job and attempt. */
function tokenFits(
  c: { env: Env; req: { header(name: string): string | undefined } },
  claim: AttemptClaim,
): Promise<boolean> {
  const token = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  return verifyAttemptToken(edgeConfig(c.env).secrets.internalToken, token, claim, Date.now());
}

const NOT_THIS_ATTEMPT = { error: "this token is not valid for this job and attempt" };
const REPLACED = { error: "this attempt is no longer the job's current one" };

/**
 * True when this attempt's result may settle the job only if it completed: it is not the job's
 * current attempt with a live lease. It was replaced, or its lease ran out (it hung) and the
 * backstop is about to start another or has started one the extractor turned away (busy, the
 * hung attempt still holding the tenant's slot): its failure is most likely the hang itself,
 * a source that timed out while it was stopped. A settled job's late results are left to
 * settlement (first come).
 */
async function isStale(env: Env, claim: AttemptClaim): Promise<boolean> {
  const state = await readAttemptState(env, { kind: claim.kind, id: claim.jobId });
  if (state === null || state.settled) return false;
  return !(state.attemptId === claim.attemptId && leaseIsLive(state, Date.now()));
}

/**
 * A key is writable only with its own attempt's token, under a job that exists and has not
 * settled.
 */
export const requireAttemptKey = createMiddleware<InternalEnv>(async (c, next) => {
  const key = safeDecode(c.req.param("key") ?? "");
  const parsed = key === null ? null : parseUploadKey(key);
  if (!parsed || key === null) {
    return c.json({ error: "not a file a job makes: {kind}/{job_id}/{attempt_id}/{name}" }, 400);
  }
  const claim = { kind: parsed.kind, jobId: parsed.jobId, attemptId: key.split("/")[2] };
  const refused = await refuseWrites(c, claim);
  if (refused) return refused;
  c.set("fileKey", key);
  c.set("claim", claim);
  await next();
});

/** The same check for a batch of files under one attempt's {kind}/{job_id}/{attempt_id}/. */
export const requireAttemptPrefix = createMiddleware<InternalEnv>(async (c, next) => {
  const prefix = ["kind", "id", "attempt"].map((name) => c.req.param(name) ?? "").join("/");
  // The prefix of a key: a file name after it must make a key of ours.
  const parsed = parseFileKey(`${prefix}/frame-0001.jpg`);
  if (!parsed) return c.json({ error: "bad key" }, 400);
  const claim = { kind: parsed.kind, jobId: parsed.jobId, attemptId: prefix.split("/")[2] };
  const refused = await refuseWrites(c, claim);
  if (refused) return refused;
  c.set("filePrefix", prefix);
  c.set("claim", claim);
  await next();
});

/** Why this attempt may not write files now (its answer), or null when it may. */
async function refuseWrites(c: Context<InternalEnv>, claim: AttemptClaim) {
  if (!(await tokenFits(c, claim))) return c.json(NOT_THIS_ATTEMPT, 401);
  const table = claim.kind === "job" ? jobs : demoJobs;
  const [row] = await c
    .get("db")
    .select({ status: table.status })
    .from(table)
    .where(eq(table.id, claim.jobId));
  if (!row) return c.json({ error: "no such job" }, 404);
  if (!(UNSETTLED_STATUSES as readonly string[]).includes(row.status)) {
    return c.json({ error: `job is ${row.status}` }, 409);
  }
  return null;
}

export async function putFrameFile(c: Context<InternalEnv>) {
  const key = c.get("fileKey");
  const length = Number(c.req.header("content-length") ?? "0");
  if (!c.req.raw.body || length <= 0 || length > MAX_FRAME_BYTES) {
    return c.json({ error: "a frame needs a body with a Content-Length up to 64 MiB" }, 400);
  }
  const object = await storeFile(c.env, key, c.req.raw.body);
  return c.json({ key, bytes: object?.size ?? length }, 200);
}

/** One file of an attempt into R2, typed by its name as /files/* serves it. */
function storeFile(env: Env, key: string, body: ReadableStream | ArrayBuffer) {
  return env.FILES.put(key, body, { httpMetadata: { contentType: contentTypeOf(key) } });
}

/** Files in one batch at most (the extractor sends up to 16: extractor/output/edge-sink.ts). */
const MAX_BATCH_FILES = 64;

/**
 * Several files of one attempt in one call: a multipart/form-data body whose every field is a
 * file, named by its file name (frame-0001.jpg). One check of the attempt and one request for
 * all of them, where each file took its own. Nothing is stored unless every field is a file
 * whose name makes a key of ours, each name once.
 */
export async function putFrameFiles(c: Context<InternalEnv>) {
  const prefix = c.get("filePrefix");
  if (!/^multipart\/form-data;/i.test(c.req.header("content-type") ?? "")) {
    return c.json({ error: "a batch is a multipart/form-data body" }, 400);
  }
  const form = await c.req.raw.formData().catch(() => null);
  if (!form) return c.json({ error: "the body is not readable multipart/form-data" }, 400);
  const files: { key: string; file: File }[] = [];
  for (const [name, value] of form.entries()) {
    const key = `${prefix}/${name}`;
    const shown = JSON.stringify(name.slice(0, 80));
    if (typeof value === "string" || parseUploadKey(key) === null) {
      return c.json({ error: `field ${shown} is not a file of ours` }, 400);
    }
    if (files.some((f) => f.key === key)) {
      return c.json({ error: `${shown} is in the batch twice` }, 400);
    }
    if (value.size <= 0 || value.size > MAX_FRAME_BYTES) {
      return c.json({ error: `${shown} is empty or over 64 MiB` }, 400);
    }
    files.push({ key, file: value });
  }
  if (files.length === 0 || files.length > MAX_BATCH_FILES) {
    return c.json({ error: `a batch holds 1 to ${MAX_BATCH_FILES} files` }, 400);
  }
  const stored = await Promise.all(
    files.map(async ({ key, file }) => {
      const object = await storeFile(c.env, key, await file.arrayBuffer());
      return { key, bytes: object?.size ?? file.size };
    }),
  );
  return c.json({ files: stored }, 200);
}

/** R2 numbers a multipart upload's parts 1 to 10,000. */
const MOST_PARTS = 10_000;

/**
 * R2's refusals that are the caller's mistake (an upload id it does not know, a part it never
 * received or cannot take, an upload too small or too large), by the code the binding ends its
 * message with: `uploadPart: The specified multipart upload does not exist. (10024)`. Anything
 * else is R2 failing, and stays a 503 (the extractor retries those).
 */
const R2_CALLER_ERRORS: Record<string, string> = {
  "10011": "the upload is smaller than R2 takes",
  "10024": "no such upload: the upload_id is unknown, completed or aborted",
  "10025": "a part was never uploaded, or its etag does not match",
  "10029": "R2 refused an argument of the upload",
  "10037": "a part's checksum does not match its bytes",
  "100100": "the upload is larger than R2 takes",
};

/** A 400 for an R2 error the caller caused; rethrows any other (answered 503). */
function refuseR2Error(c: Context<InternalEnv>, err: unknown): Response {
  const code = /\((\d{5,6})\)\s*$/.exec(err instanceof Error ? err.message : "")?.[1];
  const reason = code ? R2_CALLER_ERRORS[code] : undefined;
  if (!reason) throw err;
  return c.json({ error: reason }, 400);
}

/**
 * The upload_id the extractor is handed: R2's id with our HMAC of it and its key, so an id this
 * edge did not issue for this file is refused before R2 is asked. R2 answers a completion of an
 * id it does not know with an internal error (10001), which cannot be told from an outage.
 */
async function uploadHandle(env: Env, key: string, uploadId: string): Promise<string> {
  const secret = edgeConfig(env).secrets.internalToken ?? "";
  return `${uploadId}.${toHex(await hmacSha256(secret, `zip-upload\n${key}\n${uploadId}`))}`;
}

/** R2's upload id inside a handle issued for `key`, or null. */
async function uploadIdOf(env: Env, key: string, handle: string | undefined) {
  const dot = handle?.lastIndexOf(".") ?? -1;
  if (!handle || dot <= 0) return null;
  const uploadId = handle.slice(0, dot);
  const expected = await uploadHandle(env, key, uploadId);
  return timingSafeEqualHex(expected.slice(dot + 1), handle.slice(dot + 1).toLowerCase())
    ? uploadId
    : null;
}

const UNKNOWN_UPLOAD = { error: "no such upload: the upload_id was not issued for this file" };

export async function completeZipUpload(c: Context<InternalEnv>) {
  const body = CompletedParts.safeParse(await c.req.json().catch(() => null));
  if (!body.success) return c.json({ error: `parts needed: ${firstIssue(body.error)}` }, 400);
  const uploadId = await uploadIdOf(c.env, c.get("fileKey"), c.req.query("upload_id"));
  if (!uploadId) return c.json(UNKNOWN_UPLOAD, 400);
  const upload = c.env.FILES.resumeMultipartUpload(c.get("fileKey"), uploadId);
  try {
    const object = await upload.complete(
      body.data.parts.map((p) => ({ partNumber: p.part, etag: p.etag })),
    );
    return c.json({ key: object.key, bytes: object.size }, 200);
  } catch (err) {
    return refuseR2Error(c, err);
  }
}

export async function startZipUpload(c: Context<InternalEnv>) {
  const upload = await c.env.FILES.createMultipartUpload(c.get("fileKey"), {
    httpMetadata: { contentType: "application/zip" },
  });
  return c.json({ upload_id: await uploadHandle(c.env, c.get("fileKey"), upload.uploadId) }, 200);
}

export async function putZipPart(c: Context<InternalEnv>) {
  const part = Number(c.req.query("part"));
  if (!Number.isInteger(part) || part < 1 || part > MOST_PARTS || !c.req.raw.body) {
    return c.json({ error: `part (1 to ${MOST_PARTS}) and a body needed` }, 400);
  }
  const uploadId = await uploadIdOf(c.env, c.get("fileKey"), c.req.query("upload_id"));
  if (!uploadId) return c.json(UNKNOWN_UPLOAD, 400);
  const upload = c.env.FILES.resumeMultipartUpload(c.get("fileKey"), uploadId);
  try {
    const uploaded = await upload.uploadPart(part, c.req.raw.body);
    return c.json({ part: uploaded.partNumber, etag: uploaded.etag }, 200);
  } catch (err) {
    return refuseR2Error(c, err);
  }
}

export async function renewAttemptLease(c: Context<AppEnv>) {
  const kind = c.req.param("kind");
  const renewal = LeaseRenewalSchema.safeParse(await c.req.json().catch(() => null));
  if ((kind !== "job" && kind !== "demo") || !renewal.success) {
    return c.json({ error: "POST {attempt_id} to /internal/jobs/{job|demo}/{id}/lease" }, 400);
  }
  const job = { kind, id: c.req.param("id") ?? "" } as const;
  const attemptId = renewal.data.attempt_id;
  if (!(await tokenFits(c, { kind, jobId: job.id, attemptId })))
    return c.json(NOT_THIS_ATTEMPT, 401);
  const leaseSeconds = leaseSecondsFor(c.env);
  if (!(await renewLease(c.env, job, attemptId, leaseSeconds))) {
    // Settled, or another attempt took over after this one's lease ran out: stop working.
    logEvent("warn", "job.lease_refused", { job: job.id, attempt: attemptId, kind });
    return c.json(REPLACED, 409);
  }
  const processedSeconds = renewal.data.processed_seconds;
  if (processedSeconds !== undefined && (await stopIfUnaffordable(c.env, job, processedSeconds))) {
    logEvent("info", "job.stopped_unaffordable", {
      job: job.id,
      attempt: attemptId,
      processed_seconds: processedSeconds,
    });
    return c.json({ error: "the job costs more than the account's credits cover; stop" }, 409);
  }
  const tenant = await tenantOf(c.env, job);
  await keepExtractorAwake(c.env, { job_id: job.id, tenant }).catch((err) =>
    logEvent("warn", "extractor.keep_awake_failed", { job: job.id, error: String(err) }),
  );
  return c.json({ lease_seconds: leaseSeconds }, 200);
}

export async function postResult(c: Context<AppEnv>) {
  const body: unknown = await c.req.json().catch(() => null);
  const named = ResultClaim.safeParse(body);
  // No attempt named, so no token can fit it.
  if (!named.success) return c.json(NOT_THIS_ATTEMPT, 401);
  const claim = {
    kind: named.data.kind,
    jobId: named.data.job_id,
    attemptId: named.data.attempt_id,
  };
  if (!(await tokenFits(c, claim))) return c.json(NOT_THIS_ATTEMPT, 401);
  // An attempt whose lease ran out may still finish: its completed result is real work and
  // settles the job, but its failure (often the hang itself, a source that timed out while it
  // was stopped) must not end a job another attempt runs or is about to run, and nor may a
  // faulty result of it.
  const stale = await isStale(c.env, claim);
  const parsed = ExtractResultSchema.safeParse(body);
  if (!parsed.success) {
    if (stale) return c.json(REPLACED, 409);
    return refuseResult(c, claim, `not an extraction result: ${firstIssue(parsed.error)}`);
  }
  const result = parsed.data;
  const job = await jobOf(c, result);
  if (!job) return c.json({ error: "no such job" }, 404);
  const mismatch = resultMismatch(
    result,
    mostFramesFor(job.options, job.plan, result.duration_seconds),
  );
  if (stale && (mismatch || result.status !== "completed")) return c.json(REPLACED, 409);
  if (mismatch) return refuseResult(c, claim, mismatch);
  const key = `${result.kind}/${result.job_id}/${result.attempt_id}/result.json`;
  // Stored first: the results queue, the backstop below, carries only where it is (a result
  // with thousands of frames is larger than a queue message may be).
  await c.env.FILES.put(key, JSON.stringify(result), {
    httpMetadata: { contentType: "application/json" },
  });
  try {
    await settle(c.env, result);
    return c.json({ accepted: true, settled: true }, 202);
  } catch (err) {
    logEvent("warn", "job.settle_deferred", {
      job: result.job_id,
      attempt: result.attempt_id,
      error: String(err),
    });
    const message: ResultMessage = { kind: result.kind, job_id: result.job_id, result_key: key };
    await c.env.RESULTS_QUEUE.send(message);
    return c.json({ accepted: true, settled: false }, 202);
  }
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

function firstIssue(error: ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join(".") || "result"}: ${issue.message}` : "invalid";
}

async function jobOf(c: Context<AppEnv>, result: ExtractResult) {
  if (result.kind === "demo") {
    const row = await c.env.DB.prepare("SELECT id FROM demo_jobs WHERE id = ?1")
      .bind(result.job_id)
      .first();
    return row ? { options: null, plan: PLANS.free } : null;
  }
  const row = await c.env.DB.prepare(
    `SELECT jobs.options, accounts.plan FROM jobs
     LEFT JOIN accounts ON accounts.id = jobs.account_id WHERE jobs.id = ?1`,
  )
    .bind(result.job_id)
    .first<{ options: string; plan: string | null }>();
  if (!row) return null;
  return {
    options: storedJobOptions(result.job_id, row.options),
    plan: planOf(row.plan),
  };
}

/**
 * A result the edge cannot accept is final: the job it names (its token proved which) ends
 * failed now, uncharged, so the queue does not run the whole extraction again only to be
 * refused again.
 */
async function refuseResult(c: Context<AppEnv>, claim: AttemptClaim, reason: string) {
  if (/^[0-9a-f-]{36}$/.test(claim.jobId)) {
    logEvent("error", "job.result_refused", {
      job: claim.jobId,
      attempt: claim.attemptId,
      reason,
    });
    await failUnsettled(
      c.env,
      { kind: claim.kind, id: claim.jobId },
      "ExtractionFailed",
      `the extractor's result was refused: ${reason}`,
    );
  }
  return c.json({ error: reason }, 400);
}
