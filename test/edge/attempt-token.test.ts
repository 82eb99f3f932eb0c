// Issue 12: the extractor's calls to /internal/* carry a token for one job attempt. A token
// that leaks from job A's attempt cannot upload to, renew, or post a result for job B, nor for
// another attempt of job A; an expired token and the shared secret itself are refused too.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { attemptToken } from "../../edge/jobs/attempt-token.ts";
import { dispatchedJob, frameBytes, internal, uploadAttempt } from "./support/pipeline.ts";

function put(key: string, token: string) {
  return internal(`/internal/files/${key}`, { method: "PUT", body: "JPEG" }, token);
}

function renew(kind: string, jobId: string, attemptId: string, token: string) {
  return internal(
    `/internal/jobs/${kind}/${jobId}/lease`,
    { method: "POST", body: JSON.stringify({ attempt_id: attemptId }) },
    token,
  );
}

it("a leaked token for job A reaches nothing of job B or of another attempt of A", async () => {
  const a = await dispatchedJob();
  const b = await dispatchedJob();
  const leaked = a.callback.token;
  const otherAttempt = crypto.randomUUID();

  // Uploads: only under A's own attempt.
  expect((await put(`job/${b.job_id}/${b.attempt_id}/frame-0001.jpg`, leaked)).status).toBe(401);
  expect((await put(`job/${a.job_id}/${otherAttempt}/frame-0001.jpg`, leaked)).status).toBe(401);
  expect(
    (
      await internal(
        `/internal/uploads/job/${b.job_id}/${b.attempt_id}/frames.zip`,
        {
          method: "POST",
        },
        leaked,
      )
    ).status,
  ).toBe(401);
  // Lease renewals: only A's attempt.
  expect((await renew("job", b.job_id, b.attempt_id ?? "", leaked)).status).toBe(401);
  expect((await renew("job", a.job_id, otherAttempt, leaked)).status).toBe(401);
  expect((await renew("demo", a.job_id, a.attempt_id ?? "", leaked)).status).toBe(401);
  // Results: B's own upload, posted with A's token, is refused and B stays unsettled.
  const bResult = await uploadAttempt(b, { framesOk: 2 });
  const posted = await internal(
    "/internal/results",
    { method: "POST", body: JSON.stringify(bResult) },
    leaked,
  );
  expect(posted.status).toBe(401);
  const forged = await internal(
    "/internal/results",
    {
      method: "POST",
      body: JSON.stringify({
        ...(await uploadAttempt(a, { framesOk: 2 })),
        attempt_id: otherAttempt,
      }),
    },
    leaked,
  );
  expect(forged.status).toBe(401);
  const settled = await env.DB.prepare(
    "SELECT count(*) AS n FROM settlements WHERE job_id IN (?, ?)",
  )
    .bind(a.job_id, b.job_id)
    .first();
  expect(settled).toEqual({ n: 0 });
  // Nothing landed where the leaked token tried to write.
  expect((await env.FILES.list({ prefix: `job/${a.job_id}/${otherAttempt}/` })).objects).toEqual(
    [],
  );
  const bFile = await env.FILES.get(`job/${b.job_id}/${b.attempt_id}/frame-0001.jpg`);
  expect(new Uint8Array(await (bFile as R2ObjectBody).arrayBuffer())).toEqual(
    frameBytes(b.job_id, b.attempt_id ?? "", 1),
  );

  // The same token still does what it was issued for.
  expect((await put(`job/${a.job_id}/${a.attempt_id}/frame-0009.jpg`, leaked)).status).toBe(200);
  expect((await renew("job", a.job_id, a.attempt_id ?? "", leaked)).status).toBe(200);
});

it("refuses an expired token, a tampered one, and the shared secret", async () => {
  const a = await dispatchedJob();
  const claim = { kind: "job" as const, jobId: a.job_id, attemptId: a.attempt_id ?? "" };
  const key = `job/${a.job_id}/${a.attempt_id}/frame-0001.jpg`;
  const expired = await attemptToken(env.INTERNAL_TOKEN, claim, Math.floor(Date.now() / 1000) - 1);
  expect((await put(key, expired)).status).toBe(401);
  // A later expiry under the old signature.
  const [mac] = a.callback.token.split(".");
  expect((await put(key, `${mac}.${Math.floor(Date.now() / 1000) + 99_999}`)).status).toBe(401);
  const flipped = `${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}.${a.callback.token.split(".")[1]}`;
  expect((await put(key, flipped)).status).toBe(401);
  expect((await put(key, env.INTERNAL_TOKEN)).status).toBe(401);
  expect((await renew("job", a.job_id, a.attempt_id ?? "", env.INTERNAL_TOKEN)).status).toBe(401);
  expect((await put(key, a.callback.token)).status).toBe(200);
});
