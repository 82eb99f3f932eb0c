// Frame thumbnails at the edge (decision 0240): an attempt may upload thumb-NNNN.jpg beside its
// frames and nothing like it; a result's thumb_key is held to the attempt's own prefix like
// every key, and settlement stores it in frames.thumb_key.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isJobFileName } from "../../schema/job-files.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { dispatchedJob, internal, postResult, uploadAttempt } from "./support/pipeline.ts";

/** extractor/output/thumbnails.ts's names (it imports sharp, which workerd cannot load). */
const thumbnailFileName = (index: number) => `thumb-${String(index).padStart(4, "0")}.jpg`;

const prefixOf = (job: ExtractRequest) => `${job.kind}/${job.job_id}/${job.attempt_id}`;

async function putFile(job: ExtractRequest, name: string) {
  return internal(
    `/internal/files/${prefixOf(job)}/${name}`,
    { method: "PUT", body: "thumbnail bytes" },
    job.callback.token,
  );
}

describe("frame thumbnails", () => {
  it("are a name a job makes: thumb-NNNN.jpg, stored as JPEG; nothing like it", async () => {
    expect(isJobFileName(thumbnailFileName(1))).toBe(true);
    expect(isJobFileName(thumbnailFileName(12_345))).toBe(true);
    const job = await dispatchedJob(1);
    const stored = await putFile(job, "thumb-0001.jpg");
    expect(stored.status).toBe(200);
    const head = await env.FILES.head(`${prefixOf(job)}/thumb-0001.jpg`);
    expect(head?.httpMetadata?.contentType).toBe("image/jpeg");
    for (const name of ["thumb-0001.png", "thumb-1.jpg", "thumb-0001.jpg.html", "thumbs.jpg"]) {
      const refused = await putFile(job, name);
      expect(refused.status, name).toBe(400);
      await refused.arrayBuffer();
    }
  });

  it("a result whose thumb_key lies outside its own attempt is refused (each one fails its job)", async () => {
    const other = await dispatchedJob(1);
    for (const misplaced of [
      (_job: ExtractRequest) => `${prefixOf(other)}/thumb-0001.jpg`,
      (job: ExtractRequest) => `${job.kind}/${job.job_id}/another-attempt/thumb-0001.jpg`,
      (job: ExtractRequest) => `${prefixOf(job)}/evil.html`,
    ]) {
      const job = await dispatchedJob(1);
      const result = await uploadAttempt(job, { framesOk: 1 });
      const thumb = misplaced(job);
      const posted = await internal(
        "/internal/results",
        {
          method: "POST",
          body: JSON.stringify({
            ...result,
            frames: result.frames.map((f) => ({ ...f, thumb_key: thumb })),
          }),
        },
        job.callback.token,
      );
      expect(posted.status, thumb).toBe(400);
      await posted.arrayBuffer();
      const row = await env.DB.prepare("SELECT credits_charged FROM jobs WHERE id = ?")
        .bind(job.job_id)
        .first<{ credits_charged: number | null }>();
      expect(row?.credits_charged ?? 0, thumb).toBe(0);
    }
  });

  it("a result's own thumb_key is stored with its frame", async () => {
    const job = await dispatchedJob(2);
    const result = await uploadAttempt(job, { framesOk: 2 });
    for (const frame of result.frames) {
      const name = thumbnailFileName(frame.index);
      expect((await putFile(job, name)).status).toBe(200);
      frame.thumb_key = `${prefixOf(job)}/${name}`;
    }
    await postResult(result, job.callback.token);
    const { results } = await env.DB.prepare(
      "SELECT idx, thumb_key FROM frames WHERE job_id = ? ORDER BY idx",
    )
      .bind(job.job_id)
      .all<{ idx: number; thumb_key: string }>();
    expect(results).toEqual([
      { idx: 1, thumb_key: `${prefixOf(job)}/thumb-0001.jpg` },
      { idx: 2, thumb_key: `${prefixOf(job)}/thumb-0002.jpg` },
    ]);
  });
});
