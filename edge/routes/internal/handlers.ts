// What the extractor calls: frame and ZIP uploads into R2, lease renewals and progress of its
// attempt, its source (edge/jobs/reuse.ts), and its result. The protocol is the job's (edge/jobs/attempts.ts: who may write,
// renew, report and settle; edge/jobs/attempt-files.ts: what is stored); these handlers read
// the request, call it and answer each refusal with its status.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { type ZodError, z } from "zod";
import { decodeFileBatch, FILE_BATCH_TYPE } from "../../../schema/file-batch.ts";
import { parseFileKey, parseUploadKey } from "../../../schema/job-files.ts";
import {
  LeaseRenewalSchema,
  ProgressReportSchema,
  type SourceAnswer,
  SourceReportSchema,
} from "../../../schema/messages.ts";
import type { AppEnv } from "../../context.ts";
import {
  completeZipUpload as completeAttemptZip,
  MAX_BATCH_FILES,
  MAX_FRAME_BYTES,
  MOST_PARTS,
  startZipUpload as startAttemptZip,
  storeAttemptFile,
  storeAttemptFiles,
  storeZipPart,
} from "../../jobs/attempt-files.ts";
import type { AttemptClaim } from "../../jobs/attempt-token.ts";
import {
  type AttemptRefusal,
  acceptResult,
  isRefusal,
  mayWriteFiles,
  renewAttemptLease as renewLeaseOf,
  reportAttemptProgress,
} from "../../jobs/attempts.ts";
import { reportAttemptSource } from "../../jobs/reuse.ts";

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

export type InternalEnv = AppEnv & {
  Variables: { fileKey: string; filePrefix: string; claim: AttemptClaim };
};

const REFUSAL_STATUS = {
  invalid: 400,
  "not-this-attempt": 401,
  "no-such-job": 404,
  "too-late": 409,
} as const;

function refusal(c: Context, refused: AttemptRefusal) {
  return c.json({ error: refused.error }, REFUSAL_STATUS[refused.refused]);
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
  const refused = await mayWriteFiles(c.env, c.req.header("authorization"), claim);
  if (refused) return refusal(c, refused);
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
  const refused = await mayWriteFiles(c.env, c.req.header("authorization"), claim);
  if (refused) return refusal(c, refused);
  c.set("filePrefix", prefix);
  c.set("claim", claim);
  await next();
});

export async function putFrameFile(c: Context<InternalEnv>) {
  const key = c.get("fileKey");
  const length = Number(c.req.header("content-length") ?? "0");
  if (!c.req.raw.body || length <= 0 || length > MAX_FRAME_BYTES) {
    return c.json({ error: "a frame needs a body with a Content-Length up to 64 MiB" }, 400);
  }
  return c.json(await storeAttemptFile(c.env, key, c.req.raw.body, length), 200);
}

/**
 * Several files of one attempt in one call: a framed body (schema/file-batch.ts: a manifest
 * line of names and lengths, then the bytes), or a multipart/form-data body whose every field
 * is a file named by its file name (frame-0001.jpg), as an extractor sent before (decision
 * 0278). One check of the attempt and one request for all of them, where each file took its
 * own. Nothing is stored unless every file's name makes a key of ours, each name once.
 */
export async function putFrameFiles(c: Context<InternalEnv>) {
  const prefix = c.get("filePrefix");
  const type = c.req.header("content-type") ?? "";
  let entries: { name: string; file: File | Uint8Array | string }[];
  if (type.split(";")[0].trim().toLowerCase() === FILE_BATCH_TYPE) {
    const decoded = decodeFileBatch(await c.req.arrayBuffer());
    if ("error" in decoded) return c.json({ error: decoded.error }, 400);
    entries = decoded.map((f) => ({ name: f.name, file: f.bytes }));
  } else if (/^multipart\/form-data;/i.test(type)) {
    const form = await c.req.raw.formData().catch(() => null);
    if (!form) return c.json({ error: "the body is not readable multipart/form-data" }, 400);
    entries = [...form.entries()].map(([name, file]) => ({ name, file }));
  } else {
    return c.json({ error: `a batch is a ${FILE_BATCH_TYPE} or multipart/form-data body` }, 400);
  }
  const files: { key: string; file: File | Uint8Array }[] = [];
  const keys = new Set<string>();
  for (const { name, file } of entries) {
    const key = `${prefix}/${name}`;
    const shown = JSON.stringify(name.slice(0, 80));
    if (typeof file === "string" || parseUploadKey(key) === null) {
      return c.json({ error: `field ${shown} is not a file of ours` }, 400);
    }
    if (keys.has(key)) return c.json({ error: `${shown} is in the batch twice` }, 400);
    const size = file instanceof Uint8Array ? file.byteLength : file.size;
    if (size <= 0 || size > MAX_FRAME_BYTES) {
      return c.json({ error: `${shown} is empty or over 64 MiB` }, 400);
    }
    keys.add(key);
    files.push({ key, file });
  }
  if (files.length === 0 || files.length > MAX_BATCH_FILES) {
    return c.json({ error: `a batch holds 1 to ${MAX_BATCH_FILES} files` }, 400);
  }
  return c.json({ files: await storeAttemptFiles(c.env, files) }, 200);
}

export async function completeZipUpload(c: Context<InternalEnv>) {
  const body = CompletedParts.safeParse(await c.req.json().catch(() => null));
  if (!body.success) return c.json({ error: `parts needed: ${firstIssue(body.error)}` }, 400);
  const done = await completeAttemptZip(
    c.env,
    c.get("fileKey"),
    c.req.query("upload_id"),
    body.data.parts,
  );
  return isRefusal(done) ? refusal(c, done) : c.json(done, 200);
}

export async function startZipUpload(c: Context<InternalEnv>) {
  return c.json({ upload_id: await startAttemptZip(c.env, c.get("fileKey")) }, 200);
}

export async function putZipPart(c: Context<InternalEnv>) {
  const part = Number(c.req.query("part"));
  if (!Number.isInteger(part) || part < 1 || part > MOST_PARTS || !c.req.raw.body) {
    return c.json({ error: `part (1 to ${MOST_PARTS}) and a body needed` }, 400);
  }
  const uploaded = await storeZipPart(
    c.env,
    c.get("fileKey"),
    c.req.query("upload_id"),
    part,
    c.req.raw.body,
  );
  return isRefusal(uploaded) ? refusal(c, uploaded) : c.json(uploaded, 200);
}

export async function renewAttemptLease(c: Context<AppEnv>) {
  const kind = c.req.param("kind");
  const renewal = LeaseRenewalSchema.safeParse(await c.req.json().catch(() => null));
  if ((kind !== "job" && kind !== "demo") || !renewal.success) {
    return c.json({ error: "POST {attempt_id} to /internal/jobs/{job|demo}/{id}/lease" }, 400);
  }
  const job = { kind, id: c.req.param("id") ?? "" } as const;
  const renewed = await renewLeaseOf(c.env, c.req.header("authorization"), job, renewal.data);
  if (isRefusal(renewed)) return refusal(c, renewed);
  return c.json({ lease_seconds: renewed.leaseSeconds }, 200);
}

/** The running attempt's stage and frames (job.progress); only an account's jobs have one. */
export async function reportProgress(c: Context<AppEnv>) {
  const kind = c.req.param("kind");
  const report = ProgressReportSchema.safeParse(await c.req.json().catch(() => null));
  if (kind !== "job" || !report.success) {
    const why = report.success ? "" : `: ${firstIssue(report.error)}`;
    return c.json(
      {
        error: `POST {attempt_id, stage, frames_done, frames_total} to /internal/jobs/job/{id}/progress${why}`,
      },
      400,
    );
  }
  const job = { kind, id: c.req.param("id") ?? "" } as const;
  const taken = await reportAttemptProgress(c.env, c.req.header("authorization"), job, report.data);
  if (isRefusal(taken)) return refusal(c, taken);
  return c.json(taken, 200);
}

/**
 * The running attempt's source, before it decodes (decision 0350): the answer names the
 * account's earlier job whose frames settled this one, or null.
 */
export async function reportSource(c: Context<AppEnv>) {
  const kind = c.req.param("kind");
  const report = SourceReportSchema.safeParse(await c.req.json().catch(() => null));
  if (kind !== "job" || !report.success) {
    const why = report.success ? "" : `: ${firstIssue(report.error)}`;
    return c.json(
      { error: `POST {attempt_id, source} to /internal/jobs/job/{id}/source${why}` },
      400,
    );
  }
  const job = { kind, id: c.req.param("id") ?? "" } as const;
  const answer = await reportAttemptSource(c.env, c.req.header("authorization"), job, report.data);
  if (isRefusal(answer)) return refusal(c, answer);
  const body: SourceAnswer = { reused_from: answer.reusedFrom };
  return c.json(body, 200);
}

export async function postResult(c: Context<AppEnv>) {
  const body: unknown = await c.req.json().catch(() => null);
  const accepted = await acceptResult(c.env, c.req.header("authorization"), body);
  if (isRefusal(accepted)) return refusal(c, accepted);
  return c.json({ accepted: true, settled: accepted.settled }, 202);
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
