// The contract, as a client author meets it (issue 17): the running stack's OpenAPI document
// lints clean with Redocly's recommended rules; the client types committed in the SDK
// (sdk/src/openapi.ts) are exactly what openapi-typescript generates from it; and a client made
// from those types with openapi-fetch, pointed at the document's own server URL (the spec's {base_url}), runs
// create, poll, wait=true, list with filters, usage, the demo and the error paths against the
// real stack. The document and the code cannot drift apart unnoticed.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { components, paths } from "../../sdk/src/openapi.ts";
import { CLIENT_TYPES_FILE, generateClientTypes, lintDocument } from "../contract/generate.ts";
import { makeTestVideo } from "../support/videos.ts";
import { download, type Harness, startHarness } from "./support/harness.ts";

type Job = components["schemas"]["Job"];

let h: Harness;
let document: { servers: { url: string }[] } & Record<string, unknown>;
let videoUrl: string;

beforeAll(async () => {
  h = await startHarness();
  const file = await makeTestVideo({
    width: 320,
    height: 180,
    fps: 30,
    durationSeconds: 10,
    gop: 30,
  });
  videoUrl = h.serveVideo("/media/contract.mp4", file);
  document = (await (await fetch(`${h.stack.apiUrl}/openapi.json`)).json()) as typeof document;
});

afterAll(async () => {
  await h?.close();
});

/** A typed client for one key, made the way a client author would: from the document. */
function clientFor(auth: Record<string, string> = {}) {
  // A new connection per request: the local dev server closes idle connections, and a request
  // sent on one just as it closes fails with "other side closed" (a harness artefact; the
  // pauses while keys are made through wrangler are long enough to hit it).
  return createClient<paths>({
    baseUrl: document.servers[0].url,
    headers: { ...auth, connection: "close" },
  });
}

describe("the served OpenAPI document", () => {
  it("names the spec's base URL, ending in /v1, as its server", () => {
    expect(document.servers[0].url).toBe(h.stack.apiUrl);
    expect(document.servers[0].url).toMatch(/\/v1$/);
  });

  it("lints clean with @redocly/cli's recommended rules", () => {
    const report = lintDocument(document);
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("generates exactly the committed client types", async () => {
    const generated = await generateClientTypes(document);
    if (process.env.STILLS_UPDATE_CONTRACT === "1") writeFileSync(CLIENT_TYPES_FILE, generated);
    expect(generated).toBe(readFileSync(CLIENT_TYPES_FILE, "utf8"));
  });
});

describe("a client generated from the document", () => {
  let account: Awaited<ReturnType<Harness["newKey"]>>;
  let api: ReturnType<typeof clientFor>;
  const finished: Job[] = [];

  beforeAll(async () => {
    account = await h.newKey("starter");
    api = clientFor(account.auth);
  });

  it("creates a job and polls it until it completes", async () => {
    const created = await api.POST("/jobs", { body: { url: videoUrl, count: 3 } });
    expect(created.response.status).toBe(201);
    expect(created.data?.object).toBe("job");
    expect(["queued", "processing"]).toContain(created.data?.status);
    expect(created.response.headers.get("X-RateLimit-Limit")).toBe("120");
    const id = created.data?.id as string;
    let job: Job | undefined;
    for (let i = 0; i < 120 && job?.status !== "completed"; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      const polled = await api.GET("/jobs/{id}", { params: { path: { id } } });
      expect(polled.response.status).toBe(200);
      job = polled.data;
      expect(job?.status).not.toBe("failed");
    }
    expect(job).toMatchObject({ status: "completed", frames_count: 3, credits_charged: 1 });
    expect(job?.notice).toMatch(/^Completed/);
    finished.push(job as Job);
  });

  it("waits for a job with wait=true and downloads its frames", async () => {
    const created = await api.POST("/jobs", {
      params: { query: { wait: true } },
      body: { url: videoUrl, timestamps: [1, 2], format: "png" },
    });
    expect(created.response.status).toBe(201);
    const job = created.data as Job;
    expect(job).toMatchObject({ status: "completed", frames_count: 2, credits_charged: 1 });
    for (const frame of job.frames) {
      const file = await download(frame.url as string);
      expect(file.status).toBe(200);
      expect([...file.bytes.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    }
    finished.push(job);
  });

  it("lists jobs with limit, skip and status filters", async () => {
    const page = await api.GET("/jobs", { params: { query: { limit: 1, skip: 0 } } });
    expect(page.data).toMatchObject({ total: 2, limit: 1, skip: 0 });
    expect(page.data?.data.map((j) => j.id)).toEqual([finished[1].id]);
    const next = await api.GET("/jobs", { params: { query: { limit: 1, skip: 1 } } });
    expect(next.data?.data.map((j) => j.id)).toEqual([finished[0].id]);
    const completed = await api.GET("/jobs", { params: { query: { status: "completed" } } });
    expect(completed.data?.total).toBe(2);
    expect(completed.data?.data.every((j) => j.frames.length === 0 && j.zip_url === null)).toBe(
      true,
    );
    const failed = await api.GET("/jobs", { params: { query: { status: "failed" } } });
    expect(failed.data).toMatchObject({ total: 0, data: [] });
  });

  it("reads usage that agrees with what the jobs were charged", async () => {
    const usage = await api.GET("/usage");
    expect(usage.response.status).toBe(200);
    const charged = finished.reduce((sum, job) => sum + (job.credits_charged ?? 0), 0);
    expect(usage.data).toMatchObject({
      object: "usage",
      plan: "starter",
      credits: { available: 1500 - charged, plan: 1500 - charged, pack: 0 },
    });
    expect(usage.data?.this_period).toMatchObject({ jobs_created: 2, jobs_completed: 2 });
  });

  it("runs the public demo and reads it back", async () => {
    const anonymous = clientFor();
    const created = await anonymous.POST("/demo", { body: { url: videoUrl } });
    expect(created.response.status).toBe(201);
    const id = created.data?.id as string;
    let status = created.data?.status;
    for (let i = 0; i < 120 && status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const read = await anonymous.GET("/demo/{id}", { params: { path: { id } } });
      status = read.data?.status;
      if (status === "completed") expect(read.data?.frames).toHaveLength(6);
    }
    expect(status).toBe("completed");
    const pricing = await anonymous.GET("/pricing");
    expect(pricing.response.status).toBe(200);
  });
});

describe("the error paths, through the same client", () => {
  let starter: Awaited<ReturnType<Harness["newKey"]>>;
  let poor: Awaited<ReturnType<Harness["newKey"]>>;

  beforeAll(async () => {
    starter = await h.newKey("starter");
    poor = await h.newKey("free");
  });

  it("answers a bad request 400 in the spec's error shape", async () => {
    const api = clientFor(starter.auth);
    const bad = await api.POST("/jobs", { body: { url: videoUrl, count: 0 } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 400, data: { name: "InvalidRequest" } });
    expect(bad.error?.message).toContain("count");
  });

  it("answers `curl -d 'url=…'` (a form body) 400, not 503", async () => {
    const { key } = starter;
    // -d posts application/x-www-form-urlencoded, curl's default.
    const run = spawnSync(
      "curl",
      [
        "-s",
        "-w",
        "\n%{http_code}",
        "-H",
        `Authorization: Bearer ${key}`,
        "-d",
        `url=${videoUrl}`,
        `${document.servers[0].url}/jobs`,
      ],
      { encoding: "utf8" },
    );
    expect(run.status).toBe(0);
    const [body, status] = run.stdout.trim().split("\n");
    expect(status).toBe("400");
    expect(JSON.parse(body)).toMatchObject({
      name: "BadRequest",
      code: 400,
      className: "bad-request",
      data: { name: "InvalidRequest" },
    });
  });

  it("answers a missing key 401, an unknown job 404, no credits 402 and a flood 429", async () => {
    const anonymous = clientFor();
    const unauthenticated = await anonymous.GET("/usage");
    expect(unauthenticated.response.status).toBe(401);
    expect(unauthenticated.error?.data.name).toBe("AuthenticationRequired");

    const api = clientFor(poor.auth);
    const missing = await api.GET("/jobs/{id}", { params: { path: { id: crypto.randomUUID() } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.data.name).toBe("JobNotFound");

    // The balance goes to zero through the ledger, as a spent account's would.
    await h.execute(`INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
         SELECT 'test-spent:' || id, id, 'adjust', -plan_credits, 'contract test'
         FROM accounts WHERE email = '${poor.email}';
       UPDATE accounts SET plan_credits = 0 WHERE email = '${poor.email}';`);
    const broke = await api.POST("/jobs", { body: { url: videoUrl, timestamps: [1] } });
    expect(broke.response.status).toBe(402);
    expect(broke.error?.data.name).toBe("InsufficientBalance");

    let limited: Response | undefined;
    let limitedError: { data: { name: string } } | undefined;
    for (let i = 0; i < 40 && limited === undefined; i++) {
      const res = await api.GET("/usage");
      if (res.response.status === 429) [limited, limitedError] = [res.response, res.error];
    }
    expect(limitedError?.data.name).toBe("RateLimited");
    expect(limited?.headers.get("Retry-After")).toMatch(/^\d+$/);
  });
});
