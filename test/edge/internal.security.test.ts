// What the extractor's uploads may store and how files are served back (issue 33): /files/*
// answers every file with X-Content-Type-Options: nosniff, an attempt's token stores only the
// names a job makes (never `evil.html` under its prefix), and a bad upload id or part number
// is the caller's mistake (400), not an outage (503).
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ARCHIVE_FILE_NAME, frameFileName } from "../../extractor/output/frame-sink.ts";
import {
  CONTACT_SHEET_FILE_NAME,
  SPRITE_FILE_NAME,
  THUMBNAILS_FILE_NAME,
} from "../../extractor/storyboard/thumbnail-track.ts";
import { isJobFileName } from "../../schema/job-files.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { createAccount, ORIGIN } from "./support/api.ts";
import { createJobRunBy, dispatchedJob, internal, uploadAttempt } from "./support/pipeline.ts";

const prefixOf = (job: ExtractRequest) => `${job.kind}/${job.job_id}/${job.attempt_id}`;

async function storedUnder(job: ExtractRequest): Promise<string[]> {
  return (await env.FILES.list({ prefix: `${prefixOf(job)}/` })).objects.map((o) => o.key);
}

function batchOf(names: string[]): FormData {
  const form = new FormData();
  for (const name of names) form.append(name, new Blob(["bytes"], { type: "text/html" }), name);
  return form;
}

describe("/files/*", () => {
  it("answers files, and its refusals, with X-Content-Type-Options: nosniff", async () => {
    const account = await createAccount({ plan: "starter" });
    const created = await createJobRunBy(account, 2, { framesOk: 2 });
    expect(created.body.status).toBe("completed");
    const url = new URL(created.body.frames[0].url);
    expect(url.origin).toBe(ORIGIN);

    const served = await exports.default.fetch(url.toString());
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/jpeg");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    await served.arrayBuffer();

    url.searchParams.set("signature", "0".repeat(64));
    const refused = await exports.default.fetch(url.toString());
    expect(refused.status).toBe(403);
    expect(refused.headers.get("x-content-type-options")).toBe("nosniff");
    await refused.arrayBuffer();
  });
});

describe("uploads store only the files a job makes", () => {
  it("names the same files the extractor writes", () => {
    for (const name of [
      frameFileName(1, "jpg"),
      frameFileName(42, "png"),
      frameFileName(9999, "webp"),
      frameFileName(10_000, "jpg"),
      ARCHIVE_FILE_NAME,
      // extractor/context/captions.ts (which imports the extractor's logger)
      "captions.vtt",
      CONTACT_SHEET_FILE_NAME,
      SPRITE_FILE_NAME,
      THUMBNAILS_FILE_NAME,
    ]) {
      expect(isJobFileName(name), name).toBe(true);
    }
  });

  it("refuses any other name under the attempt's own prefix, with its own token", async () => {
    const job = await dispatchedJob(3);
    const prefix = prefixOf(job);
    for (const name of [
      "evil.html",
      "index.htm",
      "x.svg",
      "frame-0001.html",
      "frame-1.jpg",
      "frame-0001.jpg.html",
      "captions.vtt.js",
      "result.json",
      "preview-frame-0001.jpg",
      "frames.zip.exe",
    ]) {
      const put = await internal(
        `/internal/files/${prefix}/${name}`,
        { method: "PUT", body: "<script>alert(1)</script>" },
        job.callback.token,
      );
      expect(put.status, name).toBe(400);
      expect(await put.json(), name).toMatchObject({ error: expect.any(String) });
      const batch = await internal(
        `/internal/file-batches/${prefix}`,
        { method: "POST", body: batchOf(["frame-0001.jpg", name]) },
        job.callback.token,
      );
      expect(batch.status, name).toBe(400);
      await batch.arrayBuffer();
    }
    const zip = await internal(
      `/internal/uploads/${prefix}/evil.zip`,
      { method: "POST" },
      job.callback.token,
    );
    expect(zip.status).toBe(400);
    await zip.arrayBuffer();
    expect(await storedUnder(job)).toEqual([]);

    // The names a job makes are stored, typed by their names.
    for (const [name, type] of [
      ["frame-0001.png", "image/png"],
      ["captions.vtt", "text/vtt; charset=utf-8"],
      ["thumbnails.vtt", "text/vtt; charset=utf-8"],
    ]) {
      const put = await internal(
        `/internal/files/${prefix}/${name}`,
        { method: "PUT", body: "bytes" },
        job.callback.token,
      );
      expect(put.status, name).toBe(200);
      const object = await env.FILES.head(`${prefix}/${name}`);
      expect(object?.httpMetadata?.contentType, name).toBe(type);
    }
  });

  it("refuses a result that names a file no job makes, and the job fails uncharged", async () => {
    const job = await dispatchedJob(1);
    const result = await uploadAttempt(job, { framesOk: 1 });
    const evil = `${prefixOf(job)}/evil.html`;
    await env.FILES.put(evil, "<script>alert(1)</script>");
    const posted = internal(
      "/internal/results",
      {
        method: "POST",
        body: JSON.stringify({ ...result, frames: [{ ...result.frames[0], key: evil }] }),
      },
      job.callback.token,
    );
    expect((await posted).status).toBe(400);
    const row = await env.DB.prepare("SELECT status, credits_charged FROM jobs WHERE id = ?")
      .bind(job.job_id)
      .first();
    expect(row).toEqual({ status: "failed", credits_charged: 0 });
  });
});

describe("a ZIP upload's mistakes are the caller's", () => {
  async function begunUpload() {
    const job = await dispatchedJob(1);
    const key = `${prefixOf(job)}/frames.zip`;
    const begun = await internal(
      `/internal/uploads/${key}`,
      { method: "POST" },
      job.callback.token,
    );
    expect(begun.status).toBe(200);
    const { upload_id } = await begun.json<{ upload_id: string }>();
    return { job, key, uploadId: upload_id };
  }

  it("answers 400 for an upload id not issued for the file, on a part and on completion", async () => {
    const { job, key, uploadId } = await begunUpload();
    const other = await begunUpload();
    for (const bogus of [
      "bogus-upload-id",
      `${uploadId.slice(0, uploadId.lastIndexOf("."))}.${"0".repeat(64)}`,
      // Another file's own upload.
      other.uploadId,
    ]) {
      const part = await internal(
        `/internal/uploads/${key}?upload_id=${encodeURIComponent(bogus)}&part=1`,
        { method: "PUT", body: "tail" },
        job.callback.token,
      );
      expect(part.status, bogus).toBe(400);
      expect(await part.json()).toEqual({ error: expect.stringContaining("no such upload") });
      const done = await internal(
        `/internal/uploads/${key}/complete?upload_id=${encodeURIComponent(bogus)}`,
        { method: "POST", body: JSON.stringify({ parts: [{ part: 1, etag: "x" }] }) },
        job.callback.token,
      );
      expect(done.status, bogus).toBe(400);
      expect(await done.json()).toEqual({ error: expect.stringContaining("no such upload") });
    }
  });

  it("answers 400 for an upload R2 no longer has, once it is completed", async () => {
    const { job, key, uploadId } = await begunUpload();
    const put = await internal(
      `/internal/uploads/${key}?upload_id=${encodeURIComponent(uploadId)}&part=1`,
      { method: "PUT", body: "tail" },
      job.callback.token,
    );
    const uploaded = await put.json<{ part: number; etag: string }>();
    const complete = await internal(
      `/internal/uploads/${key}/complete?upload_id=${encodeURIComponent(uploadId)}`,
      { method: "POST", body: JSON.stringify({ parts: [uploaded] }) },
      job.callback.token,
    );
    expect(complete.status).toBe(200);
    await complete.arrayBuffer();
    const late = await internal(
      `/internal/uploads/${key}?upload_id=${encodeURIComponent(uploadId)}&part=2`,
      { method: "PUT", body: "more" },
      job.callback.token,
    );
    expect(late.status).toBe(400);
    expect(await late.json()).toEqual({ error: expect.stringContaining("no such upload") });
  });

  it("answers 400 for a part number R2 cannot take, and for parts it never received", async () => {
    const { job, key, uploadId } = await begunUpload();
    for (const part of ["99999", "10001", "0", "-1", "1.5", "x"]) {
      const put = await internal(
        `/internal/uploads/${key}?upload_id=${encodeURIComponent(uploadId)}&part=${part}`,
        { method: "PUT", body: "tail" },
        job.callback.token,
      );
      expect(put.status, `part ${part}`).toBe(400);
      await put.arrayBuffer();
    }
    for (const parts of [
      [{ part: 1, etag: "never-uploaded" }],
      [
        { part: 1, etag: "a" },
        { part: 1, etag: "a" },
      ],
    ]) {
      const done = await internal(
        `/internal/uploads/${key}/complete?upload_id=${encodeURIComponent(uploadId)}`,
        { method: "POST", body: JSON.stringify({ parts }) },
        job.callback.token,
      );
      expect(done.status, JSON.stringify(parts)).toBe(400);
      expect(await done.json()).toEqual({ error: expect.any(String) });
    }

    // The upload itself is still good: a real part completes it.
    const put = await internal(
      `/internal/uploads/${key}?upload_id=${encodeURIComponent(uploadId)}&part=1`,
      { method: "PUT", body: "tail" },
      job.callback.token,
    );
    expect(put.status).toBe(200);
    const uploaded = await put.json<{ part: number; etag: string }>();
    const complete = await internal(
      `/internal/uploads/${key}/complete?upload_id=${encodeURIComponent(uploadId)}`,
      { method: "POST", body: JSON.stringify({ parts: [uploaded] }) },
      job.callback.token,
    );
    expect(await complete.json()).toEqual({ key, bytes: 4 });
  });
});
