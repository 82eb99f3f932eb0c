// No paying twice (issue 40, decision 0350): a repeat of an account's own completed job, on a
// source whose final URL, ETag, Last-Modified and size agree, is served the stored frames with
// `reused_from` and charged 0, without decoding: the origin sees only the extractor's first
// ranged GET (the answer that carries the validators). A changed ETag, another account,
// other options or `reuse: false` extract afresh, charged. Two identical jobs at once: the second
// waits for the first and is served its frames (decision 0384), unless the file has no validators.
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fileRoute } from "../sources/support/servers.ts";
import { makeTestVideo } from "../support/videos.ts";
import {
  call,
  creditsAvailable,
  download,
  type Harness,
  startHarness,
  startReceiver,
} from "./support/harness.ts";

const PATH = "/media/talk.mp4";
const FIRST_BLOCK = "bytes=0-65535";

let h: Harness;
let url: string;
// What the origin answers as the file's validators; a test changes the ETag.
const validators = { etag: '"talk-v1"', lastModified: "Wed, 01 Jul 2026 10:00:00 GMT" };

beforeAll(async () => {
  h = await startHarness();
  // Several 64 KiB blocks, so any decoding reads past the first answer's block.
  const video = await makeTestVideo({ durationSeconds: 8, width: 640, height: 360, grain: true });
  expect((await stat(video)).size).toBeGreaterThan(4 * 65536);
  const file = fileRoute(video, { ranges: true, contentType: "video/mp4" });
  h.videos.route(PATH, (request, response) => {
    response.setHeader("etag", validators.etag);
    response.setHeader("last-modified", validators.lastModified);
    return file(request, response);
  });
  url = `${h.videos.origin}${PATH}`;
});

afterAll(async () => {
  await h?.close();
});

const BODY = { count: 3, resolution: 360 };

/** The origin's requests for the video while `run` runs. */
async function originRequests<T>(run: () => Promise<T>) {
  const since = h.videos.requests.length;
  const value = await run();
  const requests = h.videos.requests.slice(since).filter((r) => r.url === PATH);
  return { value, requests };
}

async function createJob(auth: Record<string, string>, body: Record<string, unknown> = {}) {
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url, ...BODY, ...body },
    headers: auth,
  });
  expect(job.status).toBe(201);
  expect(job.body.status, JSON.stringify(job.body.error)).toBe("completed");
  return job.body;
}

async function frameHashes(job: { frames: { url: string }[] }) {
  return Promise.all(
    job.frames.map(async (frame) => {
      const file = await download(frame.url);
      expect(file.status).toBe(200);
      return createHash("sha256").update(file.bytes).digest("hex");
    }),
  );
}

async function ledgerEntry(jobId: string) {
  const [row] = await h.query(
    "SELECT kind, plan_delta, pack_delta, reserved_delta FROM credit_ledger WHERE id = ?",
    [`settle:${jobId}`],
  );
  return row;
}

it("serves the same job again from its frames: reused_from, the same bytes, 0 credits, nothing decoded", async () => {
  const account = await h.newKey("starter");
  const start = await creditsAvailable(h.stack, account.auth);

  const first = await originRequests(() => createJob(account.auth));
  expect(first.value.reused_from).toBeNull();
  expect(first.value.credits_charged).toBe(1);
  // The extraction read past the first block.
  expect(first.requests.length).toBeGreaterThan(1);
  const afterFirst = await creditsAvailable(h.stack, account.auth);
  expect(afterFirst).toBe(start - 1);

  const second = await originRequests(() => createJob(account.auth));
  expect(second.value.id).not.toBe(first.value.id);
  expect(second.value.reused_from).toBe(first.value.id);
  expect(second.value.credits_charged).toBe(0);
  // Only the answer that carries the validators: one ranged GET of the first block.
  expect(second.requests.map((r) => `${r.method} ${r.range}`)).toEqual([`GET ${FIRST_BLOCK}`]);
  // The same frames, at new URLs signed for the second job.
  expect(second.value.frames_count).toBe(3);
  expect(second.value.frames.map((f: { timestamp: number }) => f.timestamp)).toEqual(
    first.value.frames.map((f: { timestamp: number }) => f.timestamp),
  );
  // Signed for the second job: they expire with it.
  const expires = new URL(second.value.frames[0].url).searchParams.get("expires");
  expect(Number(expires)).toBe(Math.floor(Date.parse(second.value.expires_at) / 1000));
  expect(await frameHashes(second.value)).toEqual(await frameHashes(first.value));

  // Charged 0: the balance did not move, the hold was released, the ledger says so.
  expect(await creditsAvailable(h.stack, account.auth)).toBe(afterFirst);
  expect(await ledgerEntry(second.value.id)).toEqual({
    kind: "release",
    plan_delta: 0,
    pack_delta: 0,
    reserved_delta: -1,
  });
  const [row] = await h.query(
    "SELECT reserved_credits FROM accounts WHERE id = (SELECT account_id FROM jobs WHERE id = ?)",
    [second.value.id],
  );
  expect(row.reserved_credits).toBe(0);

  // Read again, the job still names the job it reused.
  const read = await call(h.stack, "GET", `/jobs/${second.value.id}`, { headers: account.auth });
  expect(read.body.reused_from).toBe(first.value.id);

  // The earlier job expiring does not take the later job's frames with it.
  await h.execute(
    `UPDATE jobs SET status = 'expired', expires_at = '2020-01-01T00:00:00.000Z' WHERE id = '${first.value.id}'`,
  );
  const reread = await call(h.stack, "GET", `/jobs/${second.value.id}`, { headers: account.auth });
  expect(await frameHashes(reread.body)).toEqual(await frameHashes(second.value));
  // An expired job is never the one reused: a third repeat is served from the second.
  const third = await originRequests(() => createJob(account.auth));
  expect(third.value.reused_from).toBe(second.value.id);
  expect(third.value.credits_charged).toBe(0);
  expect(third.requests).toHaveLength(1);
  expect(await frameHashes(third.value)).toEqual(await frameHashes(second.value));
});

it("extracts afresh, charged, once the origin's ETag changed under the same URL", async () => {
  const account = await h.newKey("starter");
  const first = await createJob(account.auth);
  expect(first.credits_charged).toBe(1);
  const before = await creditsAvailable(h.stack, account.auth);
  validators.etag = '"talk-v2"';
  try {
    const again = await originRequests(() => createJob(account.auth));
    expect(again.value.reused_from).toBeNull();
    expect(again.value.credits_charged).toBe(1);
    expect(again.requests.length).toBeGreaterThan(1);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 1);
  } finally {
    validators.etag = '"talk-v1"';
  }
});

it("never reuses another account's job", async () => {
  const owner = await h.newKey("starter");
  await createJob(owner.auth);
  const other = await h.newKey("starter");
  const before = await creditsAvailable(h.stack, other.auth);
  const job = await originRequests(() => createJob(other.auth));
  expect(job.value.reused_from).toBeNull();
  expect(job.value.credits_charged).toBe(1);
  expect(job.requests.length).toBeGreaterThan(1);
  expect(await creditsAvailable(h.stack, other.auth)).toBe(before - 1);
});

it("extracts afresh for other options, and for reuse: false", async () => {
  const account = await h.newKey("starter");
  const first = await createJob(account.auth);
  const png = await originRequests(() => createJob(account.auth, { format: "png" }));
  expect(png.value.reused_from).toBeNull();
  expect(png.value.credits_charged).toBe(1);
  expect(png.requests.length).toBeGreaterThan(1);
  const png0 = await download(png.value.frames[0].url);
  expect([...png0.bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);

  // A webhook changes nothing delivered: still a repeat, and its webhook says completed.
  const receiver = await startReceiver();
  try {
    const hooked = await createJob(account.auth, { webhook_url: receiver.url });
    expect(hooked.reused_from).toBe(first.id);
    expect(hooked.credits_charged).toBe(0);
    await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(1);
    const event = JSON.parse(receiver.received[0].body);
    expect(event.type).toBe("job.completed");
    expect(event.data.reused_from).toBe(first.id);
  } finally {
    await receiver.close();
  }

  const before = await creditsAvailable(h.stack, account.auth);
  const optedOut = await originRequests(() => createJob(account.auth, { reuse: false }));
  expect(optedOut.value.reused_from).toBeNull();
  expect(optedOut.value.options.reuse).toBe(false);
  expect(optedOut.value.credits_charged).toBe(1);
  expect(optedOut.requests.length).toBeGreaterThan(1);
  expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 1);
});

it("two identical jobs at once: one extracts, the other waits for it and is served its frames", async () => {
  const body = { count: 4, resolution: 360 };
  // What one extraction of these options asks of the origin, made by another account.
  const other = await h.newKey("starter");
  const solo = await originRequests(() => createJob(other.auth, body));
  expect(solo.value.reused_from).toBeNull();

  const account = await h.newKey("starter");
  const start = await creditsAvailable(h.stack, account.auth);
  const both = await originRequests(() =>
    Promise.all([createJob(account.auth, body), createJob(account.auth, body)]),
  );
  const [a, b] = both.value;
  const [first, twin] = a.reused_from === null ? [a, b] : [b, a];
  expect(first.reused_from).toBeNull();
  expect(twin.reused_from).toBe(first.id);
  expect([first.credits_charged, twin.credits_charged]).toEqual([1, 0]);
  expect(await creditsAvailable(h.stack, account.auth)).toBe(start - 1);
  expect(await frameHashes(twin)).toEqual(await frameHashes(first));
  // One extraction's requests, and the twin's one answer with the validators: not two
  // extractions side by side.
  const firstBlocks = (requests: typeof solo.requests) =>
    requests.filter((r) => `${r.method} ${r.range}` === `GET ${FIRST_BLOCK}`).length;
  expect(both.requests.length).toBeLessThanOrEqual(solo.requests.length + 1);
  expect(firstBlocks(both.requests)).toBe(firstBlocks(solo.requests) + 1);
});

it("two identical jobs at once on a file without validators: both extract, each charged", async () => {
  // Nothing says the bytes are the same, so nothing is reused (and the twin does not wait for
  // the first to end: it goes on once the first has opened the file).
  const bare = h.serveVideo("/media/bare.mp4", await makeTestVideo({ durationSeconds: 3 }));
  const account = await h.newKey("starter");
  const start = await creditsAvailable(h.stack, account.auth);
  const run = () =>
    call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: bare, ...BODY },
      headers: account.auth,
    });
  const jobs = (await Promise.all([run(), run()])).map((r) => r.body);
  for (const job of jobs) {
    expect(job.status).toBe("completed");
    expect(job.reused_from).toBeNull();
    expect(job.credits_charged).toBe(1);
  }
  expect(await creditsAvailable(h.stack, account.auth)).toBe(start - 2);
});
