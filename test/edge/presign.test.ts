// Frame and ZIP URLs presigned for R2's S3 API. With R2 S3 credentials in the worker's
// environment (withEnv, and the same env handed to the worker's fetch), GET /v1/jobs/{id}
// must answer URLs on the bucket's S3 endpoint that a stand-in for R2 (its own SigV4
// verification, test/edge/support/s3-stand-in.ts) accepts, serving the stored bytes with the
// headers /files/* sends; tampered or expired URLs must be refused. Without credentials the
// edge keeps its /files/* URLs.

import { createExecutionContext } from "cloudflare:test";
import { env, withEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../edge/index.ts";
import { api, createAccount, freshIp, ORIGIN, type TestAccount } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { frameBytes, internal, postResult, uploadAttempt } from "./support/pipeline.ts";
import { expectedSignature, presignedParts, S3StandIn } from "./support/s3-stand-in.ts";

const ACCOUNT_ID = "0123456789abcdef0123456789abcdef";
const S3_HOST = `${ACCOUNT_ID}.r2.cloudflarestorage.com`;
const BUCKET = "stills-files";
const CREDENTIALS = {
  R2_ACCESS_KEY_ID: "test-r2-access-key",
  R2_SECRET_ACCESS_KEY: "test-r2-secret-access-key",
  R2_ACCOUNT_ID: ACCOUNT_ID,
  R2_BUCKET_NAME: BUCKET,
};
const DAY = 86_400;

type Vars = Partial<Record<keyof typeof CREDENTIALS | "R2_S3_ENDPOINT", string>>;

/** Calls the worker with these settings in its environment, as production would have them. */
async function callWith(vars: Vars, path: string, headers: Record<string, string> = {}) {
  const configured = { ...env, ...vars } as Env;
  const request = new Request(`${ORIGIN}${path}`, {
    headers: { "cf-connecting-ip": freshIp(), ...headers },
  });
  const response = (await withEnv(configured, () =>
    worker.fetch(
      request as Parameters<typeof worker.fetch>[0],
      configured,
      createExecutionContext(),
    ),
  )) as Response;
  const type = response.headers.get("content-type") ?? "";
  const body = type.includes("json")
    ? await response.json<any>()
    : type.startsWith("text/")
      ? await response.text()
      : new Uint8Array(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body };
}

function standIn(options: { now?: () => number; secret?: string } = {}) {
  return new S3StandIn({
    endpoint: `https://${S3_HOST}`,
    bucket: BUCKET,
    accessKeyId: CREDENTIALS.R2_ACCESS_KEY_ID,
    secretAccessKey: options.secret ?? CREDENTIALS.R2_SECRET_ACCESS_KEY,
    objects: env.FILES,
    now: options.now,
  });
}

interface FinishedJob {
  account: TestAccount;
  jobId: string;
  attemptId: string;
  zipBytes: Uint8Array;
}

/** A completed job with two frames and a ZIP, run through the real pipeline. */
async function finishedJob(): Promise<FinishedJob> {
  const account = await createAccount({ plan: "starter" });
  const zipBytes = new TextEncoder().encode(`PK-zip-${crypto.randomUUID()}`);
  let attemptId = "";
  setExtractor(async (request) => {
    const result = await uploadAttempt(request, { framesOk: 2, processedSeconds: 20 });
    const key = `job/${request.job_id}/${result.attempt_id}/frames.zip`;
    const put = await internal(`/internal/files/${key}`, { method: "PUT", body: zipBytes });
    expect(put.ok).toBe(true);
    result.zip = { key, bytes: zipBytes.byteLength };
    attemptId = result.attempt_id;
    await postResult(result);
    return Response.json({ status: "completed" });
  });
  const created = await api("POST", "/v1/jobs?wait=true", {
    body: { url: "https://cdn.example.com/talk.mp4", count: 2, output: "both" },
    headers: account.auth,
  });
  expect(created.status).toBe(201);
  expect(created.body.status).toBe("completed");
  return { account, jobId: created.body.id, attemptId, zipBytes };
}

async function setExpiry(jobId: string, expiresAt: Date) {
  await env.DB.prepare("UPDATE jobs SET expires_at = ? WHERE id = ?")
    .bind(expiresAt.toISOString(), jobId)
    .run();
}

function frameKey(job: FinishedJob, index: number) {
  return `job/${job.jobId}/${job.attemptId}/frame-${String(index).padStart(4, "0")}.jpg`;
}

describe("with R2 S3 credentials configured", () => {
  it("GET /v1/jobs/{id} answers frame and ZIP URLs on the bucket's S3 endpoint, signed, ending at expires_at", async () => {
    const job = await finishedJob();
    const expiresAt = new Date(Date.now() + 2 * DAY * 1000 + 123);
    await setExpiry(job.jobId, expiresAt);
    const before = Math.floor(Date.now() / 1000);
    const read = await callWith(CREDENTIALS, `/v1/jobs/${job.jobId}`, job.account.auth);
    const after = Math.floor(Date.now() / 1000);
    expect(read.status).toBe(200);
    expect(read.body.status).toBe("completed");
    expect(read.body.frames).toHaveLength(2);

    const s3 = standIn();
    for (const [i, frame] of (read.body.frames as { url: string }[]).entries()) {
      const parts = presignedParts(frame.url);
      expect(parts.host).toBe(S3_HOST);
      expect(new URL(frame.url).protocol).toBe("https:");
      expect(parts.bucket).toBe(BUCKET);
      expect(parts.key).toBe(frameKey(job, i + 1));
      expect(parts.algorithm).toBe("AWS4-HMAC-SHA256");
      const day = new Date(parts.signedAt * 1000).toISOString().slice(0, 10).replaceAll("-", "");
      expect(parts.credential).toBe(`${CREDENTIALS.R2_ACCESS_KEY_ID}/${day}/auto/s3/aws4_request`);
      expect(parts.signedHeaders).toBe("host");
      expect(parts.signedAt).toBeGreaterThanOrEqual(before);
      expect(parts.signedAt).toBeLessThanOrEqual(after);
      // The earlier of expires_at and 7 days: here expires_at, to the second.
      expect(parts.expiresAt).toBe(Math.floor(expiresAt.getTime() / 1000));
      expect(parts.responseHeaders["content-type"]).toBe("image/jpeg");
      expect(parts.responseHeaders["content-disposition"]).toBeUndefined();
      expect(new URL(frame.url).searchParams.get("X-Amz-Signature")).toBe(
        await expectedSignature(frame.url, CREDENTIALS.R2_SECRET_ACCESS_KEY),
      );

      const served = await s3.fetch(frame.url);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("image/jpeg");
      expect(served.headers.get("cache-control")).toBe("private, max-age=3600");
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(
        frameBytes(job.jobId, job.attemptId, i + 1),
      );
    }

    const zip = presignedParts(read.body.zip_url);
    expect(zip.host).toBe(S3_HOST);
    expect(zip.key).toBe(`job/${job.jobId}/${job.attemptId}/frames.zip`);
    expect(zip.expiresAt).toBe(Math.floor(expiresAt.getTime() / 1000));
    const served = await s3.fetch(read.body.zip_url);
    expect(served.status).toBe(200);
    // The same headers /files/* answers a ZIP with.
    expect(served.headers.get("content-type")).toBe("application/zip");
    expect(served.headers.get("content-disposition")).toBe(
      `attachment; filename="${job.jobId}.zip"`,
    );
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(job.zipBytes);
    expect(s3.refusals).toEqual([]);
  });

  it("caps the URLs at 7 days, SigV4's limit, when the job lives longer", async () => {
    const job = await finishedJob();
    await setExpiry(job.jobId, new Date(Date.now() + 30 * DAY * 1000));
    const read = await callWith(CREDENTIALS, `/v1/jobs/${job.jobId}`, job.account.auth);
    const parts = presignedParts(read.body.frames[0].url);
    expect(parts.expiresSeconds).toBe(7 * DAY);
    expect(parts.expiresAt).toBe(parts.signedAt + 7 * DAY);
    expect((await standIn().fetch(read.body.frames[0].url)).status).toBe(200);
  });

  it("refuses a URL once it has expired, and accepts it until then", async () => {
    const job = await finishedJob();
    await setExpiry(job.jobId, new Date(Date.now() + 3600 * 1000));
    const read = await callWith(CREDENTIALS, `/v1/jobs/${job.jobId}`, job.account.auth);
    const url = read.body.frames[0].url as string;
    const { expiresAt } = presignedParts(url);
    expect((await standIn({ now: () => (expiresAt - 1) * 1000 }).fetch(url)).status).toBe(200);
    const late = standIn({ now: () => (expiresAt + 1) * 1000 });
    const refused = await late.fetch(url);
    expect(refused.status).toBe(403);
    expect(late.refusals[0].message).toBe("Request has expired");
  });

  it("refuses a tampered URL: another object, a longer expiry, other headers, another host, a forged signature", async () => {
    const job = await finishedJob();
    await setExpiry(job.jobId, new Date(Date.now() + 3600 * 1000));
    const read = await callWith(CREDENTIALS, `/v1/jobs/${job.jobId}`, job.account.auth);
    const url = read.body.frames[0].url as string;
    const { expiresSeconds } = presignedParts(url);
    const s3 = standIn();
    expect((await s3.fetch(url)).status).toBe(200);

    const tampered = [
      url.replace("frame-0001.jpg", "frame-0002.jpg"),
      url.replace(/X-Amz-Expires=\d+/, `X-Amz-Expires=${expiresSeconds + 60}`),
      url.replace("image%2Fjpeg", "text%2Fhtml"),
      `${url}&response-content-disposition=attachment`,
      url.replace(
        /X-Amz-Signature=([0-9a-f])/,
        (_, c) => `X-Amz-Signature=${c === "0" ? "1" : "0"}`,
      ),
    ];
    for (const [i, forged] of tampered.entries()) {
      expect(forged, `tampering ${i}`).not.toBe(url);
      const answer = await s3.fetch(forged);
      expect(answer.status, forged).toBe(403);
      expect(await answer.text()).toContain("SignatureDoesNotMatch");
    }
    const otherHost = url.replace(
      S3_HOST,
      `ffffffffffffffffffffffffffffffff.r2.cloudflarestorage.com`,
    );
    expect((await s3.fetch(otherHost)).status).toBe(403);
    // A URL signed with another secret is not R2's either.
    const otherSecret = standIn({ secret: "another-secret" });
    expect((await otherSecret.fetch(url)).status).toBe(403);
    expect(otherSecret.refusals[0].code).toBe("SignatureDoesNotMatch");
  });

  it("mints no URL for a job whose files are gone, and none in list rows", async () => {
    const job = await finishedJob();
    const list = await callWith(CREDENTIALS, "/v1/jobs?limit=5", job.account.auth);
    expect(list.status).toBe(200);
    const row = list.body.data.find((j: { id: string }) => j.id === job.jobId);
    expect(row.frames).toEqual([]);
    expect(row.zip_url).toBeNull();

    await setExpiry(job.jobId, new Date(Date.now() - 1000));
    const read = await callWith(CREDENTIALS, `/v1/jobs/${job.jobId}`, job.account.auth);
    expect(read.body.status).toBe("expired");
    expect(read.body.frames.map((f: { url: string | null }) => f.url)).toEqual([null, null]);
    expect(read.body.zip_url).toBeNull();
  });

  it("signs for R2_S3_ENDPOINT instead when it is set (a jurisdiction's endpoint)", async () => {
    const job = await finishedJob();
    const endpoint = `https://${ACCOUNT_ID}.eu.r2.cloudflarestorage.com`;
    const read = await callWith(
      { ...CREDENTIALS, R2_ACCOUNT_ID: "", R2_S3_ENDPOINT: `${endpoint}/` },
      `/v1/jobs/${job.jobId}`,
      job.account.auth,
    );
    const url = read.body.frames[0].url as string;
    expect(url.startsWith(`${endpoint}/${BUCKET}/job/${job.jobId}/`)).toBe(true);
    const eu = new S3StandIn({
      endpoint,
      bucket: BUCKET,
      accessKeyId: CREDENTIALS.R2_ACCESS_KEY_ID,
      secretAccessKey: CREDENTIALS.R2_SECRET_ACCESS_KEY,
      objects: env.FILES,
    });
    expect((await eu.fetch(url)).status).toBe(200);
  });

  it("lets pages show images from the S3 endpoint (img-src), and only then", async () => {
    const configured = await callWith(CREDENTIALS, "/");
    expect(configured.status).toBe(200);
    const policy = configured.headers.get("content-security-policy") ?? "";
    expect(policy).toMatch(new RegExp(`img-src [^;]*https://${S3_HOST.replaceAll(".", "\\.")}`));
    expect(policy).toContain("script-src 'self'");

    const signIn = await callWith(CREDENTIALS, "/sign-in");
    expect(signIn.headers.get("content-security-policy")).toContain(`https://${S3_HOST}`);

    const local = await callWith({}, "/");
    expect(local.headers.get("content-security-policy")).not.toContain("r2.cloudflarestorage.com");
    const localSignIn = await callWith({}, "/sign-in");
    expect(localSignIn.headers.get("content-security-policy")).not.toContain("cloudflarestorage");
  });
});

describe("without R2 S3 credentials", () => {
  it("keeps the edge's signed /files/* URLs, which serve the same bytes and headers", async () => {
    const job = await finishedJob();
    const read = await api("GET", `/v1/jobs/${job.jobId}`, { headers: job.account.auth });
    const url = new URL(read.body.frames[0].url);
    expect(url.origin).toBe(env.PUBLIC_BASE_URL);
    expect(url.pathname).toBe(`/files/${frameKey(job, 1)}`);
    const zip = await callWith(
      {},
      new URL(read.body.zip_url).pathname + new URL(read.body.zip_url).search,
    );
    expect(zip.status).toBe(200);
    expect(zip.headers.get("content-type")).toBe("application/zip");
    expect(zip.headers.get("content-disposition")).toBe(`attachment; filename="${job.jobId}.zip"`);
    expect(zip.headers.get("cache-control")).toBe("private, max-age=3600");
    expect(zip.body).toEqual(job.zipBytes);
  });

  it("keeps them when the configuration is incomplete (no secret), rather than sign with half of it", async () => {
    const job = await finishedJob();
    const { R2_SECRET_ACCESS_KEY: _secret, ...withoutSecret } = CREDENTIALS;
    const read = await callWith(withoutSecret, `/v1/jobs/${job.jobId}`, job.account.auth);
    expect(new URL(read.body.frames[0].url).pathname).toBe(`/files/${frameKey(job, 1)}`);
  });
});
