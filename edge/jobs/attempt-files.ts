// The files an attempt writes into R2 under its {kind}/{job_id}/{attempt_id}/ prefix: frames one
// at a time or in a batch, and a ZIP as an R2 multipart upload. Who may write is decided first
// (edge/jobs/attempts.ts mayWriteFiles); these only store, typed by name as /files/* serves them.
import { contentTypeOf } from "../../schema/job-files.ts";
import { edgeConfig } from "../config.ts";
import { hmacSha256, timingSafeEqualHex, toHex } from "../crypto.ts";
import type { AttemptRefusal } from "./attempts.ts";

export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** Files in one batch at most (the extractor sends up to 16: extractor/output/edge-sink.ts). */
export const MAX_BATCH_FILES = 64;

/** R2 numbers a multipart upload's parts 1 to 10,000. */
export const MOST_PARTS = 10_000;

export interface StoredFile {
  key: string;
  bytes: number;
}

/** One file of an attempt into R2; `bytes` is R2's size, or the length the caller declared. */
export async function storeAttemptFile(
  env: Env,
  key: string,
  body: ReadableStream | ArrayBuffer | Uint8Array,
  declaredBytes: number,
): Promise<StoredFile> {
  const object = await env.FILES.put(key, body, {
    httpMetadata: { contentType: contentTypeOf(key) },
  });
  return { key, bytes: object?.size ?? declaredBytes };
}

/**
 * A batch of one attempt's files, all checked by the caller before any is stored: parts of a
 * multipart body (File), or views of a framed one (schema/file-batch.ts), stored as they are.
 */
export function storeAttemptFiles(
  env: Env,
  files: readonly { key: string; file: File | Uint8Array }[],
): Promise<StoredFile[]> {
  return Promise.all(
    files.map(async ({ key, file }) =>
      file instanceof Uint8Array
        ? storeAttemptFile(env, key, file, file.byteLength)
        : storeAttemptFile(env, key, await file.arrayBuffer(), file.size),
    ),
  );
}

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

/** The refusal for an R2 error the caller caused; rethrows any other (answered 503). */
function refusalOfR2Error(err: unknown): AttemptRefusal {
  const code = /\((\d{5,6})\)\s*$/.exec(err instanceof Error ? err.message : "")?.[1];
  const reason = code ? R2_CALLER_ERRORS[code] : undefined;
  if (!reason) throw err;
  return { refused: "invalid", error: reason };
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

const UNKNOWN_UPLOAD: AttemptRefusal = {
  refused: "invalid",
  error: "no such upload: the upload_id was not issued for this file",
};

/** Starts the ZIP's multipart upload; the handle names it in the calls that follow. */
export async function startZipUpload(env: Env, key: string): Promise<string> {
  const upload = await env.FILES.createMultipartUpload(key, {
    httpMetadata: { contentType: "application/zip" },
  });
  return uploadHandle(env, key, upload.uploadId);
}

/** One part of the ZIP's upload. */
export async function storeZipPart(
  env: Env,
  key: string,
  handle: string | undefined,
  part: number,
  body: ReadableStream,
): Promise<{ part: number; etag: string } | AttemptRefusal> {
  const uploadId = await uploadIdOf(env, key, handle);
  if (!uploadId) return UNKNOWN_UPLOAD;
  const upload = env.FILES.resumeMultipartUpload(key, uploadId);
  try {
    const uploaded = await upload.uploadPart(part, body);
    return { part: uploaded.partNumber, etag: uploaded.etag };
  } catch (err) {
    return refusalOfR2Error(err);
  }
}

/** Joins the uploaded parts into the ZIP. */
export async function completeZipUpload(
  env: Env,
  key: string,
  handle: string | undefined,
  parts: readonly { part: number; etag: string }[],
): Promise<StoredFile | AttemptRefusal> {
  const uploadId = await uploadIdOf(env, key, handle);
  if (!uploadId) return UNKNOWN_UPLOAD;
  const upload = env.FILES.resumeMultipartUpload(key, uploadId);
  try {
    const object = await upload.complete(parts.map((p) => ({ partNumber: p.part, etag: p.etag })));
    return { key: object.key, bytes: object.size };
  } catch (err) {
    return refusalOfR2Error(err);
  }
}
