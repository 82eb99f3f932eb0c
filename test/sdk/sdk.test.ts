// The TypeScript SDK (sdk/, issue 37) against the real stack: create with wait, every page of
// the list, waiting with progress callbacks, usage, pricing, the demo, frames on disk, errors
// as StillsError, retries (429 after Retry-After; a create whose answer was lost is sent again
// under the same Idempotency-Key and makes one job), and webhook verification of a delivery
// the stack really made.
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type Job,
  Stills,
  StillsConnectionError,
  StillsError,
  StillsWebhookError,
} from "../../sdk/src/index.ts";
import { download, type Harness, startHarness, startReceiver } from "../e2e/support/harness.ts";
import { fetchFrom, freshLoopbackAddress } from "../support/from-address.ts";
import { readImagePattern } from "../support/videos.ts";
import { frameNumberAt, makeSdkVideo, recordingFetch } from "./support.ts";

let h: Harness;
let videoUrl: string;
let account: Awaited<ReturnType<Harness["newKey"]>>;
const finished: Job[] = [];

beforeAll(async () => {
  h = await startHarness();
  videoUrl = h.serveVideo("/media/sdk.mp4", await makeSdkVideo());
  account = await h.newKey("starter");
});

afterAll(async () => {
  await h?.close();
});

function stillsFor(apiKey: string, extra: ConstructorParameters<typeof Stills>[0] = {}) {
  return new Stills({ apiKey, baseUrl: h.stack.apiUrl, fetch: recordingFetch().fetch, ...extra });
}

/** Rejects with the error a call threw. */
async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

/** Spends a free key's whole minute (30 requests) so its next request is refused with 429. */
async function exhaust(key: string) {
  let refused = false;
  for (let i = 0; i < 40 && !refused; i++) {
    const response = await fetch(`${h.stack.apiUrl}/usage`, {
      headers: { authorization: `Bearer ${key}`, connection: "close" },
    });
    await response.arrayBuffer();
    refused = response.status === 429;
  }
  expect(refused).toBe(true);
}

describe("jobs", () => {
  it("creates a job with wait and returns it completed, its frames the video's own", async () => {
    const recorder = recordingFetch();
    const stills = stillsFor(account.key, { fetch: recorder.fetch });
    const job = await stills.jobs.create({ url: videoUrl, count: 4 }, { wait: true });
    expect(job).toMatchObject({ object: "job", status: "completed", frames_count: 4 });
    expect(job.credits_charged).toBe(1);
    for (const frame of job.frames) {
      const file = await download(frame.url as string);
      expect([...file.bytes.slice(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
      expect((await readImagePattern(file.bytes)).number).toBe(frameNumberAt(frame.timestamp));
    }
    // The SDK sent an Idempotency-Key of its own, and the stack recorded it for this job.
    const create = recorder.log.find((e) => e.method === "POST");
    const key = create?.headers.get("idempotency-key");
    expect(key).toMatch(/^[0-9a-f-]{32,36}$/);
    const rows = await h.query("SELECT job_id FROM idempotency_keys WHERE key = ?", [
      key as string,
    ]);
    expect(rows.map((r) => r.job_id)).toEqual([job.id]);
    finished.push(job);
  });

  it("waits for a running job, calling onProgress with each state it reads", async () => {
    const stills = stillsFor(account.key);
    const created = await stills.jobs.create({ url: videoUrl, every: 2, format: "png" });
    expect(["queued", "processing"]).toContain(created.status);
    const seen: Job[] = [];
    const job = await stills.jobs.waitFor(created.id, {
      pollInterval: 100,
      onProgress: (current) => seen.push(current),
    });
    expect(job).toMatchObject({ id: created.id, status: "completed", frames_count: 5 });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(["queued", "processing"]).toContain(seen[0].status);
    expect(seen.at(-1)).toEqual(job);
    // Statuses only move forward.
    const order = ["queued", "processing", "completed"];
    const ranks = seen.map((j) => order.indexOf(j.status));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    finished.push(job);
  });

  it("get with wait returns the ended job", async () => {
    const stills = stillsFor(account.key);
    const created = await stills.jobs.create({ url: videoUrl, timestamps: [1, 2.5] });
    const job = await stills.jobs.get(created.id, { wait: true });
    expect(job).toMatchObject({ id: created.id, status: "completed", frames_count: 2 });
    expect((await stills.jobs.get(created.id)).status).toBe("completed");
    finished.push(job);
  });

  it("lists every job across pages, newest first", async () => {
    const recorder = recordingFetch();
    const stills = stillsFor(account.key, { fetch: recorder.fetch });
    const all = await stills.jobs.list({ limit: 2 }).toArray();
    expect(all.map((j) => j.id)).toEqual([...finished].reverse().map((j) => j.id));
    expect(recorder.log.map((e) => new URL(e.url).search)).toEqual([
      "?limit=2&skip=0",
      "?limit=2&skip=2",
    ]);
    const pages = [];
    for await (const page of stills.jobs.list({ limit: 2 }).pages()) pages.push(page);
    expect(pages.map((p) => [p.total, p.skip, p.data.length])).toEqual([
      [3, 0, 2],
      [3, 2, 1],
    ]);
    const completed = [];
    for await (const job of stills.jobs.list({ status: "completed", limit: 1 })) {
      completed.push(job.id);
    }
    expect(completed).toHaveLength(3);
  });

  it("downloads the frames to disk under stable names, at most `concurrency` at once", async () => {
    const recorder = recordingFetch();
    const stills = stillsFor(account.key, { fetch: recorder.fetch });
    const job = await stills.jobs.get(finished[1].id);
    const dir = mkdtempSync(join(tmpdir(), "stills-sdk-frames-"));
    try {
      const files = await stills.frames.download(job, dir, { concurrency: 2 });
      expect(readdirSync(dir).sort()).toEqual([
        "frame-0001.png",
        "frame-0002.png",
        "frame-0003.png",
        "frame-0004.png",
        "frame-0005.png",
      ]);
      expect(recorder.maxInFlight).toBeLessThanOrEqual(2);
      // No API key goes to the signed file URLs.
      const fileRequests = recorder.log.filter((e) => e.url.includes("/files/"));
      expect(fileRequests).toHaveLength(5);
      expect(fileRequests.every((e) => !e.headers.has("authorization"))).toBe(true);
      for (const [i, file] of files.entries()) {
        const bytes = readFileSync(file.path);
        expect(file).toMatchObject({ index: i + 1, timestamp: job.frames[i].timestamp });
        expect(file.bytes).toBe(bytes.length);
        expect(Buffer.compare(bytes, (await download(job.frames[i].url as string)).bytes)).toBe(0);
        expect((await readImagePattern(bytes)).number).toBe(frameNumberAt(file.timestamp ?? 0));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads usage: the plan's credits less what the jobs were charged", async () => {
    const usage = await stillsFor(account.key).usage();
    const charged = finished.reduce((sum, job) => sum + (job.credits_charged ?? 0), 0);
    expect(charged).toBeGreaterThan(0);
    expect(usage).toMatchObject({ object: "usage", plan: "starter" });
    expect(usage.credits.available).toBe(usage.credits.monthly_allowance - charged);
  });

  it("reads pricing and runs the demo without a key", async () => {
    // A network of its own: other files on the shared stack use the demo's daily allowance
    // per address too, and the stack takes the address from the socket (decision 0104).
    const stills = new Stills({
      apiKey: "",
      baseUrl: h.stack.apiUrl,
      fetch: fetchFrom(freshLoopbackAddress()),
    });
    const pricing = await stills.pricing();
    expect(Object.keys(pricing).length).toBeGreaterThan(0);
    const demo = await stills.demo.create({ url: videoUrl }, { wait: { pollInterval: 250 } });
    expect(demo).toMatchObject({ object: "demo_job", status: "completed", frames_count: 6 });
    expect((await stills.demo.get(demo.id)).id).toBe(demo.id);
  });
});

describe("errors", () => {
  it("400: InvalidUrl with every problem, the request id and the guide", async () => {
    const recorder = recordingFetch();
    const stills = stillsFor(account.key, { fetch: recorder.fetch });
    const error = await thrown(stills.jobs.create({ url: "not a link", count: 0 }));
    expect(error).toBeInstanceOf(StillsError);
    const e = error as StillsError;
    expect(e.status).toBe(400);
    expect(e.data.name).toBe("InvalidUrl");
    expect(e.userMessage.length).toBeGreaterThan(0);
    expect(e.errors.map((p) => p.param)).toEqual(expect.arrayContaining(["url", "count"]));
    expect(e.requestId).toBe(e.headers.get("x-request-id"));
    expect(e.requestId).toBeTruthy();
    expect(e.docUrl).toMatch(/\/docs\/errors#InvalidUrl$/);
    expect(recorder.log).toHaveLength(1);
  });

  it("401: AuthenticationRequired without a key, InvalidApiKey with a wrong one", async () => {
    const none = await thrown(new Stills({ apiKey: "", baseUrl: h.stack.apiUrl }).usage());
    expect(none).toMatchObject({ status: 401, data: { name: "AuthenticationRequired" } });
    const wrong = await thrown(stillsFor(`stills_live_${"x".repeat(38)}`).usage());
    expect(wrong).toBeInstanceOf(StillsError);
    expect(wrong).toMatchObject({ status: 401, data: { name: "InvalidApiKey" } });
  });

  it("402: InsufficientBalance, sent once", async () => {
    const broke = await h.newKey("free");
    await h.execute(
      `UPDATE accounts SET plan_credits = 0, pack_credits = 0 WHERE email = '${broke.email}'`,
    );
    const recorder = recordingFetch();
    const error = await thrown(
      stillsFor(broke.key, { fetch: recorder.fetch }).jobs.create({ url: videoUrl, count: 2 }),
    );
    expect(error).toMatchObject({ status: 402, data: { name: "InsufficientBalance" } });
    expect(recorder.log).toHaveLength(1);
  });

  it("404: JobNotFound", async () => {
    const error = await thrown(stillsFor(account.key).jobs.get(randomUUID()));
    expect(error).toMatchObject({ status: 404, data: { name: "JobNotFound" } });
  });

  it("429: RateLimited with Retry-After, when retries are off", async () => {
    // As below: a token that came back before the call means a new key, emptied again.
    let error: unknown;
    for (let tries = 0; tries < 4; tries++) {
      const free = await h.newKey("free");
      await exhaust(free.key);
      // A call that succeeds (a token came back in between) is set up again, not failed here.
      error = await stillsFor(free.key, { retry: false })
        .usage()
        .then(
          () => undefined,
          (refusal: unknown) => refusal,
        );
      if ((error as StillsError | undefined)?.status === 429) break;
    }
    expect(error).toMatchObject({ status: 429, data: { name: "RateLimited" } });
    expect((error as StillsError).retryAfter).toBeGreaterThan(0);
  });
});

describe("retries", () => {
  it("waits for Retry-After after a 429, then succeeds", async () => {
    // The call must reach a key still empty. A free key gets a token back every 2 s, and on a
    // loaded machine that can happen between emptying it and the call; then the setting up (a
    // new key, emptied) is done again, never the checks below.
    let recorder = recordingFetch();
    let usage: Awaited<ReturnType<Stills["usage"]>> | undefined;
    for (let tries = 0; tries < 4; tries++) {
      const free = await h.newKey("free");
      await exhaust(free.key);
      recorder = recordingFetch();
      usage = await stillsFor(free.key, { fetch: recorder.fetch }).usage();
      if (recorder.log[0]?.status === 429) break;
    }
    expect(usage?.plan).toBe("free");
    const [refused, ...rest] = recorder.log;
    expect(refused.status).toBe(429);
    const waitSeconds = Number(refused.retryAfter);
    expect(waitSeconds).toBeGreaterThan(0);
    expect(rest.at(-1)?.status).toBe(200);
    // The first retry came no sooner than the server asked.
    expect(rest[0].startedAt - refused.endedAt).toBeGreaterThanOrEqual(waitSeconds * 1000 - 20);
  });

  it("sends a create whose answer was lost again, under the same key, making one job", async () => {
    const fresh = await h.newKey("starter");
    const recorder = recordingFetch();
    let lostJobId: string | undefined;
    // The stack answers the first create; the answer is lost on the way back.
    const losing: typeof fetch = async (input, init) => {
      const response = await recorder.fetch(input, init);
      if (init?.method === "POST" && lostJobId === undefined) {
        lostJobId = ((await response.json()) as Job).id;
        throw new TypeError("fetch failed", { cause: new Error("socket hang up") });
      }
      return response;
    };
    const stills = stillsFor(fresh.key, {
      fetch: losing,
      retry: { initialDelayMs: 50 },
    });
    const job = await stills.jobs.create({ url: videoUrl, count: 2 }, { wait: true });
    expect(job.id).toBe(lostJobId);
    expect(job.status).toBe("completed");
    const posts = recorder.log.filter((e) => e.method === "POST");
    expect(posts).toHaveLength(2);
    expect(posts[1].headers.get("idempotency-key")).toBe(posts[0].headers.get("idempotency-key"));
    const list = await stills.jobs.list().toArray();
    expect(list.map((j) => j.id)).toEqual([job.id]);
    const usage = await stills.usage();
    expect(usage.credits.available).toBe(usage.credits.monthly_allowance - 1);
  });

  it("gives up on a network failure after its bounded retries", async () => {
    let calls = 0;
    const failing: typeof fetch = async () => {
      calls++;
      throw new TypeError("fetch failed");
    };
    const stills = new Stills({
      apiKey: account.key,
      baseUrl: h.stack.apiUrl,
      fetch: failing,
      retry: { maxRetries: 2, initialDelayMs: 10 },
    });
    expect(await thrown(stills.usage())).toBeInstanceOf(StillsConnectionError);
    expect(calls).toBe(3);
  });
});

describe("webhooks", () => {
  it("verifies a delivery the stack made, and refuses it tampered, re-keyed or old", async () => {
    const receiver = await startReceiver();
    try {
      const stills = stillsFor(account.key);
      const job = await stills.jobs.create(
        { url: videoUrl, count: 2, webhook_url: receiver.url },
        { wait: true },
      );
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const [hook] = receiver.received;
      expect(hook).toBeDefined();
      const secret = await h.webhookSecret(account.email);
      const headers = hook.headers as Record<string, string>;

      const event = await stills.webhooks.verify(hook.body, headers, secret);
      expect(event.type).toBe("job.completed");
      expect(event.data).toMatchObject({ id: job.id, status: "completed", frames_count: 2 });

      // The same delivery in the account's log (written right after the attempt), read through
      // every page, one delivery a page.
      await vi.waitFor(
        async () => {
          const logged = await stills.webhooks.deliveries({ limit: 1 }).toArray();
          expect(logged.find((delivery) => delivery.job_id === job.id)).toMatchObject({
            id: headers["webhook-id"],
            type: "job.completed",
            state: "delivered",
            last_status_code: 200,
            body: hook.body,
          });
        },
        { timeout: 10_000, interval: 200 },
      );
      // The same with a Fetch Headers object, as a Worker or a Request handler has it.
      await expect(
        stills.webhooks.verify(hook.body, new Headers(headers), secret),
      ).resolves.toEqual(event);

      const tampered = hook.body.replace('"frames_count":2', '"frames_count":3');
      expect(tampered).not.toBe(hook.body);
      await expect(stills.webhooks.verify(tampered, headers, secret)).rejects.toThrow(
        StillsWebhookError,
      );
      const otherSecret = `whsec_${Buffer.from("another secret of 32 bytes......").toString("base64")}`;
      await expect(stills.webhooks.verify(hook.body, headers, otherSecret)).rejects.toThrow(
        /no webhook-signature matches/,
      );

      // Signed correctly (by the scheme, not by the SDK), but ten minutes old: a replay.
      const signAt = (timestamp: number) => {
        const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
        const mac = createHmac("sha256", key)
          .update(`${headers["webhook-id"]}.${timestamp}.${hook.body}`)
          .digest("base64");
        return {
          ...headers,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": `v1,${mac}`,
        };
      };
      const now = Math.floor(Date.now() / 1000);
      await expect(stills.webhooks.verify(hook.body, signAt(now - 600), secret)).rejects.toThrow(
        /refusing a replay/,
      );
      await expect(stills.webhooks.verify(hook.body, signAt(now), secret)).resolves.toEqual(event);
      await expect(
        stills.webhooks.verify(hook.body, { ...headers, "webhook-signature": undefined }, secret),
      ).rejects.toThrow(/missing/);
    } finally {
      await receiver.close();
    }
  });
});
