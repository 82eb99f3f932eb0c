// What the extractor calls: frame and ZIP uploads into R2, and its result, which goes on the
// results queue. Every call carries the shared INTERNAL_TOKEN; nobody else can post a file or
// a result, and files land only under the prefix of a job that is still running.
import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { demoJobs, jobs } from "../../../schema/db.ts";
import {
  EXTRACT_ERROR_NAMES,
  type ExtractResult,
  type ResultMessage,
} from "../../../schema/messages.ts";
import { createRouter } from "../../app.ts";
import type { AppEnv } from "../../context.ts";
import { sha256Hex, timingSafeEqualHex } from "../../crypto.ts";
import { CONTENT_TYPES, parseFileKey } from "../../files.ts";

const MAX_FRAME_BYTES = 64 * 1024 * 1024;

const JobErrorShape = z.object({
  name: z.enum(EXTRACT_ERROR_NAMES),
  message: z.string(),
  userMessage: z.string(),
});

/**
 * A result may only point at files of its own attempt: a buggy or compromised extractor
 * must not be able to hand one job's signed URLs to another job's files.
 */
const ExtractResultSchema = z
  .object({
    job_id: z.uuid(),
    kind: z.enum(["job", "demo"]),
    attempt_id: z.string().regex(/^[0-9a-zA-Z-]{1,64}$/),
    status: z.enum(["completed", "failed"]),
    duration_seconds: z.number().nullable(),
    processed_seconds: z.number().nullable(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    requested_resolution: z.number().int().nullable(),
    delivered_resolution: z.number().int().nullable(),
    resolution_note: z.string().nullable(),
    frames: z.array(
      z.object({
        index: z.number().int().min(1),
        timestamp: z.number(),
        status: z.enum(["ok", "error"]),
        key: z.string().nullable(),
        pts: z.number().nullable(),
        error: z.string().nullable(),
      }),
    ),
    zip: z.object({ key: z.string(), bytes: z.number().int() }).nullable(),
    error: JobErrorShape.nullable(),
  })
  .refine((r) => {
    const prefix = `${r.kind}/${r.job_id}/${r.attempt_id}/`;
    const keys = [...r.frames.map((f) => f.key), r.zip?.key ?? null];
    return keys.every((k) => k === null || (k.startsWith(prefix) && parseFileKey(k) !== null));
  }, "every file key must lie under the result's own {kind}/{job_id}/{attempt_id}/");

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
    const key = decodeURIComponent(c.req.param("key") ?? "");
    const parsed = parseFileKey(key);
    if (!parsed) return c.json({ error: "bad key" }, 400);
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
    const body = await c.req.json<{ parts: { part: number; etag: string }[] }>();
    if (!uploadId || !Array.isArray(body.parts))
      return c.json({ error: "upload_id and parts needed" }, 400);
    const upload = c.env.FILES.resumeMultipartUpload(c.get("fileKey"), uploadId);
    const object = await upload.complete(
      body.parts.map((p) => ({ partNumber: p.part, etag: p.etag })),
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
    const parsed = ExtractResultSchema.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      return c.json({ error: `not an extraction result: ${parsed.error.issues[0]?.message}` }, 400);
    }
    const result = parsed.data as ExtractResult;
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
