// A stand-in extractor for edge tests: it uploads frames through the real /internal endpoints
// (into real R2) and posts a result, as extractor/ does, so the queues, settlement, credits
// and signed URLs run for real inside workerd.
import { env, exports } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { attemptToken } from "../../../edge/jobs/attempt-token.ts";
import type {
  ExtractRequest,
  ExtractResult,
  FrameResult,
  JobKind,
} from "../../../schema/messages.ts";
import { api, createAccount, ORIGIN, type TestAccount } from "./api.ts";
import { setExtractor } from "./fake-extractor.ts";

/**
 * A call to /internal/* with a bearer token: the one given, or else a valid one for the attempt
 * the call names (its file key, or its result's kind, job_id and attempt_id), as the extractor
 * holds for its own attempt. Pass "" to send none.
 */
export async function internal(path: string, init: RequestInit = {}, token?: string) {
  const bearer = token ?? (await tokenForCall(path, init.body));
  return exports.default.fetch(`${ORIGIN}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(init.headers as Record<string, string>),
    },
  });
}

async function tokenForCall(path: string, body: unknown): Promise<string> {
  const key = /^\/internal\/(?:files|file-batches|uploads)\/([^?]+)/.exec(path)?.[1];
  if (key !== undefined) {
    let decoded = key;
    try {
      decoded = decodeURIComponent(key);
    } catch {}
    const [kind, jobId, attemptId] = decoded.split("/");
    return tokenFor(kind as JobKind, jobId ?? "", attemptId ?? "");
  }
  if (typeof body === "string") {
    try {
      const named = JSON.parse(body) as { kind?: JobKind; job_id?: string; attempt_id?: string };
      return tokenFor(named.kind ?? "job", named.job_id ?? "", named.attempt_id ?? "");
    } catch {}
  }
  return "";
}

/**
 * A token for one attempt, signed as the edge signs them: for attempts a test makes up itself
 * (a second attempt racing the first). Dispatched attempts use `request.callback.token`.
 */
export function tokenFor(kind: JobKind, jobId: string, attemptId: string, lifeSeconds = 3600) {
  return attemptToken(
    env.INTERNAL_TOKEN,
    { kind, jobId, attemptId },
    Math.floor(Date.now() / 1000) + lifeSeconds,
  );
}

/** The dispatched attempt's own token, or one minted for an attempt the test made up. */
async function attemptCredentials(request: ExtractRequest, attemptId?: string) {
  if (request.attempt_id && (attemptId === undefined || attemptId === request.attempt_id)) {
    return { attemptId: request.attempt_id, token: request.callback.token };
  }
  const made = attemptId ?? crypto.randomUUID();
  return { attemptId: made, token: await tokenFor(request.kind, request.job_id, made) };
}

/** Bytes that identify one frame of one attempt, so a test can tell exactly what it got. */
export function frameBytes(jobId: string, attemptId: string, index: number): Uint8Array {
  return new TextEncoder().encode(`JPEG:${jobId}:${attemptId}:${index}`);
}

/**
 * A job of `count` frames, created by a new starter account and dispatched to a stand-in
 * extractor that accepts it and does nothing: the extract request it was sent (its attempt
 * and that attempt's token).
 */
export async function dispatchedJob(count = 2): Promise<ExtractRequest> {
  const account = await createAccount({ plan: "starter" });
  let request: ExtractRequest | undefined;
  setExtractor((r) => {
    request = r;
    return Response.json({ accepted: true }, { status: 202 });
  });
  const created = await api("POST", "/v1/jobs", {
    body: { url: "https://cdn.example.com/clips/talk.mp4", count },
    headers: account.auth,
  });
  await vi.waitFor(() => expect(request?.job_id).toBe(created.body.id));
  return request as ExtractRequest;
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
  const { token } = await attemptCredentials(request, result.attempt_id);
  await postResult(result, token);
  return result;
}

/**
 * A job of `count` frames created with wait=true, which the stand-in extractor runs with
 * `run`: the create answer's status and body, for the test to judge.
 */
export async function createJobRunBy(account: TestAccount, count: number, run: FakeRun) {
  setExtractor(async (request) => {
    await runFakeExtraction(request, run);
    return Response.json({ status: "completed" });
  });
  return api("POST", "/v1/jobs?wait=true", {
    body: { url: "https://cdn.example.com/talk.mp4", count },
    headers: account.auth,
  });
}

export async function postResult(result: ExtractResult, token?: string) {
  const posted = await internal(
    "/internal/results",
    { method: "POST", body: JSON.stringify(result) },
    token ?? (await tokenFor(result.kind, result.job_id, result.attempt_id)),
  );
  if (posted.status !== 202)
    throw new Error(`result refused: ${posted.status} ${await posted.text()}`);
}

/** Uploads an attempt's frames and returns its result, not yet posted. */
export async function uploadAttempt(
  request: ExtractRequest,
  run: FakeRun = {},
): Promise<ExtractResult> {
  const { attemptId, token } = await attemptCredentials(request, run.attemptId);
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
      const put = await internal(
        `/internal/files/${key}`,
        { method: "PUT", body: frameBytes(request.job_id, attemptId, i) },
        token,
      );
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
