// A stand-in extractor for edge tests: it uploads frames through the real /internal endpoints
// (into real R2) and posts a result, as extractor/ does, so the queues, settlement, credits
// and signed URLs run for real inside workerd.
import { env, exports } from "cloudflare:workers";
import type { ExtractRequest, ExtractResult, FrameResult } from "../../../schema/messages.ts";
import { ORIGIN } from "./api.ts";

export function internal(path: string, init: RequestInit = {}) {
  return exports.default.fetch(`${ORIGIN}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${env.INTERNAL_TOKEN}`,
      ...(init.headers as Record<string, string>),
    },
  });
}

/** Bytes that identify one frame of one attempt, so a test can tell exactly what it got. */
export function frameBytes(jobId: string, attemptId: string, index: number): Uint8Array {
  return new TextEncoder().encode(`JPEG:${jobId}:${attemptId}:${index}`);
}

export interface FakeRun {
  framesOk?: number;
  framesFailed?: number;
  processedSeconds?: number;
  /** The video's length; by default 100 s, or the processed span when that is longer. */
  durationSeconds?: number;
  fail?: ExtractResult["error"];
  attemptId?: string;
}

export async function runFakeExtraction(
  request: ExtractRequest,
  run: FakeRun = {},
): Promise<ExtractResult> {
  const result = await uploadAttempt(request, run);
  await postResult(result);
  return result;
}

export async function postResult(result: ExtractResult) {
  const posted = await internal("/internal/results", {
    method: "POST",
    body: JSON.stringify(result),
  });
  if (posted.status !== 202)
    throw new Error(`result refused: ${posted.status} ${await posted.text()}`);
}

/** Uploads an attempt's frames and returns its result, not yet posted. */
export async function uploadAttempt(
  request: ExtractRequest,
  run: FakeRun = {},
): Promise<ExtractResult> {
  const attemptId = run.attemptId ?? crypto.randomUUID();
  const frames: FrameResult[] = [];
  if (!run.fail) {
    const ok = run.framesOk ?? 3;
    for (let i = 1; i <= ok + (run.framesFailed ?? 0); i++) {
      if (i > ok) {
        frames.push({
          index: i,
          timestamp: i,
          status: "error",
          key: null,
          pts: null,
          error: "past the end of the video",
        });
        continue;
      }
      const key = `${request.kind}/${request.job_id}/${attemptId}/frame-${String(i).padStart(4, "0")}.jpg`;
      const put = await internal(`/internal/files/${key}`, {
        method: "PUT",
        body: frameBytes(request.job_id, attemptId, i),
      });
      if (!put.ok) throw new Error(`upload failed: ${put.status} ${await put.text()}`);
      frames.push({ index: i, timestamp: i - 0.5, status: "ok", key, pts: i - 0.5, error: null });
    }
  }
  const result: ExtractResult = {
    job_id: request.job_id,
    kind: request.kind,
    attempt_id: attemptId,
    status: run.fail ? "failed" : "completed",
    duration_seconds: run.fail
      ? null
      : (run.durationSeconds ?? Math.max(100, run.processedSeconds ?? 0)),
    processed_seconds: run.fail ? null : (run.processedSeconds ?? 100),
    width: run.fail ? null : 1280,
    height: run.fail ? null : 720,
    requested_resolution: request.options.resolution,
    delivered_resolution: run.fail ? null : 720,
    resolution_note: null,
    frames,
    zip: null,
    error: run.fail ?? null,
  };
  return result;
}
