// What the extractor calls: frame and ZIP uploads into R2, and its result, which goes on the
// results queue. Every call carries the shared INTERNAL_TOKEN; nobody else can post a file or
// a result, and files land only under the prefix of a job that is still running.
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { type ZodError, z } from "zod";
import { demoJobs, jobs } from "../../../schema/db.ts";
import type { ExtractResult, JobOptions, ResultMessage } from "../../../schema/messages.ts";
import { isPlanName, PLANS } from "../../../schema/plans.ts";
import { createRouter } from "../../app.ts";
import type { AppEnv } from "../../context.ts";
import { sha256Hex, timingSafeEqualHex } from "../../crypto.ts";
import { CONTENT_TYPES, parseFileKey } from "../../files.ts";
import { failJob } from "../../queues/results.ts";
import {
  type CheckedResult,
  ExtractResultSchema,
  mostFramesFor,
  resultMismatch,
} from "./result.ts";

const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** A ZIP's parts as the extractor lists them when it completes the upload. */
const CompletedParts = z.object({
  parts: z
    .array(z.object({ part: z.number().int().min(1).max(10_000), etag: z.string().max(200) }))
    .max(10_000),
});

const requireInternalToken = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.env.INTERNAL_TOKEN;
  const given = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  // Equal-length comparison of the hex digests keeps the check constant-time.
  const [a, b] = await Promise.all([sha256Hex(expected ?? ""), sha256Hex(given)]);
  if (!expected || !timingSafeEqualHex(a, b)) return c.json({ error: "unauthorized" }, 401);
  await next();
});

/** A key is writable only under a job that exists and has not finished. */
const requireRunningJobKey = createMiddleware<AppEnv & { Variables: { fileKey: string } }>(
  async (c, next) => {
    const key = safeDecode(c.req.param("key") ?? "");
    const parsed = key === null ? null : parseFileKey(key);
    if (!parsed || key === null) return c.json({ error: "bad key" }, 400);
    const table = parsed.kind === "job" ? jobs : demoJobs;
    const [row] = await c
      .get("db")
      .select({ status: table.status })
      .from(table)
      .where(eq(table.id, parsed.jobId));
    if (!row) return c.json({ error: "no such job" }, 404);
    if (row.status !== "queued" && row.status !== "processing") {
      return c.json({ error: `job is ${row.status}` }, 409);
    }
    c.set("fileKey", key);
    await next();
  },
);

const router = createRouter();
router.use("/internal/*", requireInternalToken);

// Upload keys end in .zip, so `<key>/complete` can never be read as a key of its own.

export const internalRouter = router
  .put("/internal/files/:key{.+}", requireRunningJobKey, async (c) => {
    const key = c.get("fileKey");
    const length = Number(c.req.header("content-length") ?? "0");
    if (!c.req.raw.body || length <= 0 || length > MAX_FRAME_BYTES) {
      return c.json({ error: "a frame needs a body with a Content-Length up to 64 MiB" }, 400);
    }
    const extension = key.split(".").pop() ?? "";
    const object = await c.env.FILES.put(key, c.req.raw.body, {
      httpMetadata: { contentType: CONTENT_TYPES[extension] ?? "application/octet-stream" },
    });
    return c.json({ key, bytes: object?.size ?? length }, 200);
  })
  .post("/internal/uploads/:key{.+\\.zip}/complete", requireRunningJobKey, async (c) => {
    const uploadId = c.req.query("upload_id");
    const body = CompletedParts.safeParse(await c.req.json().catch(() => null));
    if (!uploadId || !body.success) return c.json({ error: "upload_id and parts needed" }, 400);
    const upload = c.env.FILES.resumeMultipartUpload(c.get("fileKey"), uploadId);
    const object = await upload.complete(
      body.data.parts.map((p) => ({ partNumber: p.part, etag: p.etag })),
    );
    return c.json({ key: object.key, bytes: object.size }, 200);
  })
  .post("/internal/uploads/:key{.+\\.zip}", requireRunningJobKey, async (c) => {
    const upload = await c.env.FILES.createMultipartUpload(c.get("fileKey"), {
      httpMetadata: { contentType: "application/zip" },
    });
    return c.json({ upload_id: upload.uploadId }, 200);
  })
  .put("/internal/uploads/:key{.+\\.zip}", requireRunningJobKey, async (c) => {
    const uploadId = c.req.query("upload_id");
    const part = Number(c.req.query("part"));
    if (!uploadId || !Number.isInteger(part) || part < 1 || !c.req.raw.body) {
      return c.json({ error: "upload_id, part and a body needed" }, 400);
    }
    const upload = c.env.FILES.resumeMultipartUpload(c.get("fileKey"), uploadId);
    const uploaded = await upload.uploadPart(part, c.req.raw.body);
    return c.json({ part: uploaded.partNumber, etag: uploaded.etag }, 200);
  })
  .post("/internal/results", async (c) => {
    const body: unknown = await c.req.json().catch(() => null);
    const parsed = ExtractResultSchema.safeParse(body);
    if (!parsed.success) {
      return refuseResult(c, body, `not an extraction result: ${firstIssue(parsed.error)}`);
    }
    const result = parsed.data;
    const job = await jobOf(c, result);
    if (!job) return c.json({ error: "no such job" }, 404);
    const mismatch = resultMismatch(
      result,
      mostFramesFor(job.options, job.plan, result.duration_seconds),
    );
    if (mismatch) return refuseResult(c, body, mismatch);
    const key = `${result.kind}/${result.job_id}/${result.attempt_id}/result.json`;
    // A result with thousands of frames is larger than a queue message may be: the message
    // carries only where the result is stored.
    await c.env.FILES.put(key, JSON.stringify(result), {
      httpMetadata: { contentType: "application/json" },
    });
    const message: ResultMessage = { kind: result.kind, job_id: result.job_id, result_key: key };
    await c.env.RESULTS_QUEUE.send(message);
    return c.json({ accepted: true }, 202);
  });

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

async function jobOf(c: Context<AppEnv>, result: CheckedResult) {
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
    options: JSON.parse(row.options) as JobOptions,
    plan: PLANS[row.plan && isPlanName(row.plan) ? row.plan : "free"],
  };
}

/**
 * A result the edge cannot accept is final: the job it names ends failed now (uncharged), so
 * the queue does not run the whole extraction again only to be refused again.
 */
async function refuseResult(c: Context<AppEnv>, body: unknown, reason: string) {
  const named = body as Partial<ExtractResult> | null;
  const id = typeof named?.job_id === "string" ? named.job_id : "";
  const kind = named?.kind;
  if (/^[0-9a-f-]{36}$/.test(id) && (kind === "job" || kind === "demo")) {
    console.error(`result for ${kind} ${id} refused: ${reason}`);
    await failJob(
      c.env,
      { kind, id },
      "ExtractionFailed",
      `the extractor's result was refused: ${reason}`,
    );
  }
  return c.json({ error: reason }, 400);
}
