// Frames in one call: POST /internal/file-batches/{kind}/{job_id}/{attempt_id}, a framed body
// (schema/file-batch.ts: a manifest line of names and lengths, then the bytes; what
// extractor/output/edge-sink.ts sends, decision 0278) or a multipart body of files named by
// their file names (what it sent before). The attempt is checked once for all of them, as a single upload checks it; a
// batch that is not wholly files of ours stores nothing.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { encodeFileBatch, FILE_BATCH_TYPE } from "../../schema/file-batch.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import {
  dispatchedJob,
  internal,
  postResult,
  tokenFor,
  uploadAttempt,
} from "./support/pipeline.ts";

function batchOf(files: [name: string, bytes: string, type: string][]): FormData {
  const form = new FormData();
  for (const [name, bytes, type] of files) form.append(name, new Blob([bytes], { type }), name);
  return form;
}

function framed(files: [name: string, bytes: string][]): Uint8Array {
  const encoder = new TextEncoder();
  return encodeFileBatch(files.map(([name, text]) => ({ name, bytes: encoder.encode(text) })));
}

function send(
  request: ExtractRequest,
  body: BodyInit,
  token?: string,
  attemptId?: string,
  contentType?: string,
) {
  const prefix = `${request.kind}/${request.job_id}/${attemptId ?? request.attempt_id}`;
  return internal(
    `/internal/file-batches/${prefix}`,
    { method: "POST", body, ...(contentType ? { headers: { "content-type": contentType } } : {}) },
    token ?? request.callback.token,
  );
}

function sendFramed(request: ExtractRequest, body: Uint8Array | string) {
  return send(request, body, undefined, undefined, FILE_BATCH_TYPE);
}

async function storedUnder(request: ExtractRequest): Promise<string[]> {
  const prefix = `${request.kind}/${request.job_id}/${request.attempt_id}/`;
  return (await env.FILES.list({ prefix })).objects.map((o) => o.key);
}

it("stores every file of a batch under its attempt, with its own type, and says so in order", async () => {
  const job = await dispatchedJob(3);
  const prefix = `job/${job.job_id}/${job.attempt_id}`;
  const answer = await send(
    job,
    batchOf([
      ["frame-0002.jpg", "JPEG two", "image/jpeg"],
      ["frame-0001.jpg", "JPEG one", "image/jpeg"],
      ["captions.vtt", "WEBVTT\n", "text/vtt"],
    ]),
  );
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({
    files: [
      { key: `${prefix}/frame-0002.jpg`, bytes: 8 },
      { key: `${prefix}/frame-0001.jpg`, bytes: 8 },
      { key: `${prefix}/captions.vtt`, bytes: 7 },
    ],
  });
  for (const [name, text, type] of [
    ["frame-0001.jpg", "JPEG one", "image/jpeg"],
    ["frame-0002.jpg", "JPEG two", "image/jpeg"],
    ["captions.vtt", "WEBVTT\n", "text/vtt; charset=utf-8"],
  ]) {
    const object = (await env.FILES.get(`${prefix}/${name}`)) as R2ObjectBody;
    expect(await object.text()).toBe(text);
    expect(object.httpMetadata?.contentType).toBe(type);
  }
});

it("refuses a batch its token may not write, as a single upload is refused", async () => {
  const job = await dispatchedJob(3);
  const other = await dispatchedJob(3);
  const files = () => batchOf([["frame-0001.jpg", "JPEG", "image/jpeg"]]);
  expect((await send(job, files(), "")).status).toBe(401);
  expect((await send(job, files(), env.INTERNAL_TOKEN)).status).toBe(401);
  // Another job's token, and this job's under an attempt it was not issued for.
  expect((await send(job, files(), other.callback.token)).status).toBe(401);
  expect((await send(job, files(), job.callback.token, crypto.randomUUID())).status).toBe(401);
  const unknown = { ...job, job_id: crypto.randomUUID() };
  const forUnknown = await tokenFor("job", unknown.job_id, job.attempt_id ?? "");
  expect((await send(unknown, files(), forUnknown)).status).toBe(404);
  expect(await storedUnder(job)).toEqual([]);

  // Once the job has settled, its attempt may write nothing more.
  await postResult(await uploadAttempt(job, { framesOk: 1 }), job.callback.token);
  const late = await send(job, batchOf([["frame-0002.jpg", "JPEG", "image/jpeg"]]));
  expect(late.status).toBe(409);
  const stored = await storedUnder(job);
  expect(stored).toContain(`job/${job.job_id}/${job.attempt_id}/frame-0001.jpg`);
  expect(stored).not.toContain(`job/${job.job_id}/${job.attempt_id}/frame-0002.jpg`);
});

it("stores nothing of a body that is not wholly files of ours, each named once", async () => {
  const job = await dispatchedJob(3);
  const withText = batchOf([["frame-0001.jpg", "JPEG", "image/jpeg"]]);
  withText.append("frame-0002.jpg", "a plain field, not a file");
  const bodies: [string, BodyInit][] = [
    ["JSON", JSON.stringify({ "frame-0001.jpg": "JPEG" })],
    ["a text field", withText],
    ["a name with a slash", batchOf([["x/frame-0001.jpg", "JPEG", "image/jpeg"]])],
    ["a name too long", batchOf([[`${"f".repeat(65)}.jpg`, "JPEG", "image/jpeg"]])],
    [
      "the same name twice",
      batchOf([
        ["frame-0001.jpg", "JPEG", "image/jpeg"],
        ["frame-0001.jpg", "JPEG again", "image/jpeg"],
      ]),
    ],
    ["an empty file", batchOf([["frame-0001.jpg", "", "image/jpeg"]])],
    ["no files", new FormData()],
    [
      "65 files",
      batchOf(
        Array.from({ length: 65 }, (_, i) => [
          `frame-${String(i + 1).padStart(4, "0")}.jpg`,
          "JPEG",
          "image/jpeg",
        ]),
      ),
    ],
  ];
  for (const [what, body] of bodies) {
    const answer = await send(job, body);
    expect(answer.status, what).toBe(400);
    expect(await answer.json(), what).toMatchObject({ error: expect.any(String) });
  }
  expect(await storedUnder(job)).toEqual([]);
  // A prefix that is not an attempt's.
  const bad = await internal("/internal/file-batches/job/not-a-job/a", {
    method: "POST",
    body: batchOf([["frame-0001.jpg", "JPEG", "image/jpeg"]]),
  });
  expect(bad.status).toBe(400);
});

it("stores a framed batch's files with their exact bytes, typed by name, and says so in order", async () => {
  const job = await dispatchedJob(3);
  const prefix = `job/${job.job_id}/${job.attempt_id}`;
  // Bytes that a multipart parser or a text decoder would trip on: CRLFs, a boundary-like
  // line, a NUL and invalid UTF-8.
  const jpeg = new Uint8Array([0xff, 0xd8, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xc3, 0x28, 0xff, 0xd9]);
  const thumb = new Uint8Array([0x0a, 0x0a, 0x7b, 0x7d]);
  const body = encodeFileBatch([
    { name: "frame-0002.jpg", bytes: jpeg },
    { name: "thumb-0002.jpg", bytes: thumb },
    { name: "captions.vtt", bytes: new TextEncoder().encode("WEBVTT\n") },
  ]);
  const answer = await sendFramed(job, body);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({
    files: [
      { key: `${prefix}/frame-0002.jpg`, bytes: jpeg.length },
      { key: `${prefix}/thumb-0002.jpg`, bytes: thumb.length },
      { key: `${prefix}/captions.vtt`, bytes: 7 },
    ],
  });
  for (const [name, bytes, type] of [
    ["frame-0002.jpg", jpeg, "image/jpeg"],
    ["thumb-0002.jpg", thumb, "image/jpeg"],
    ["captions.vtt", new TextEncoder().encode("WEBVTT\n"), "text/vtt; charset=utf-8"],
  ] as const) {
    const object = (await env.FILES.get(`${prefix}/${name}`)) as R2ObjectBody;
    expect(new Uint8Array(await object.arrayBuffer()), name).toEqual(bytes);
    expect(object.httpMetadata?.contentType, name).toBe(type);
  }
});

it("stores nothing of a framed body whose manifest is not whole, or not files of ours", async () => {
  const job = await dispatchedJob(3);
  const one = framed([["frame-0001.jpg", "JPEG"]]);
  const bodies: [string, Uint8Array | string][] = [
    ["no manifest line", "JPEG"],
    ["a manifest that is not JSON", "{files:\nJPEG"],
    ["a manifest of another shape", `${JSON.stringify({ "frame-0001.jpg": 4 })}\nJPEG`],
    ["a byte short", one.subarray(0, one.length - 1)],
    ["a byte over", new Uint8Array([...one, 0x41])],
    ["a manifest line too long", `${" ".repeat(20_000)}{"files":[]}\n`],
    ["a name with a slash", framed([["x/frame-0001.jpg", "JPEG"]])],
    ["a name not a job's", framed([["evil.html", "<script>"]])],
    [
      "the same name twice",
      framed([
        ["frame-0001.jpg", "JPEG"],
        ["frame-0001.jpg", "JPEG again"],
      ]),
    ],
    ["an empty file", framed([["frame-0001.jpg", ""]])],
    ["no files", framed([])],
    [
      "65 files",
      framed(
        Array.from({ length: 65 }, (_, i) => [`frame-${String(i + 1).padStart(4, "0")}.jpg`, "J"]),
      ),
    ],
  ];
  for (const [what, body] of bodies) {
    const answer = await sendFramed(job, body);
    expect(answer.status, what).toBe(400);
    expect(await answer.json(), what).toMatchObject({ error: expect.any(String) });
  }
  // Neither framed nor multipart.
  const plain = await send(job, one, undefined, undefined, "application/octet-stream");
  expect(plain.status).toBe(400);
  await plain.arrayBuffer();
  expect(await storedUnder(job)).toEqual([]);
});
