// The authenticated read's fast path (GET /v1/jobs/{id}): a remembered key is answered for by
// its rate limiter (no D1 trip), the job and its frames come in one D1 statement built once
// per isolate, a settled job is remembered, and file signatures are remembered. Each test
// checks that a guarantee still holds through the mechanism: a key revoked anywhere is
// refused within the limiter's lease, the answer is the one the drizzle path gave, byte for
// byte, and remembered signatures are the computed ones.

import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { afterEach, describe, expect, it } from "vitest";
import { hmacSha256, toHex } from "../../edge/crypto.ts";
import worker from "../../edge/index.ts";
import { keyLimiter, LEASE_MS, setLimiterClock } from "../../edge/middleware/rate-limit.ts";
import { preparedSelect } from "../../edge/storage/prepared-select.ts";
import { jobs } from "../../schema/db.ts";
import {
  api,
  createAccount,
  freshIp,
  ORIGIN,
  revokeElsewhere,
  type TestAccount,
} from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { createJobRunBy } from "./support/pipeline.ts";
import { answerFromDrizzle } from "./support/reference-read.ts";

async function completedJob(account: TestAccount): Promise<string> {
  const created = await createJobRunBy(account, 4, {
    framesOk: 3,
    framesFailed: 1,
    processedSeconds: 20,
  });
  expect(created.body.status).toBe("completed");
  return created.body.id;
}

const REQUEST_LOG_WRITE = /^insert into "api_requests"/;

/** What a request asked of D1: each batch (with its statements' SQL) and each lone statement. */
type D1Call = { kind: "batch"; sql: string[] } | { kind: "statement"; sql: string };

function recordingDb() {
  const calls: D1Call[] = [];
  const sessions: string[] = [];
  const sqlOf = new WeakMap<object, string>();
  // A statement, and each statement bound from it, records itself when it runs alone.
  const watchStatement = (statement: D1PreparedStatement, text: string): D1PreparedStatement => {
    const watched = new Proxy(statement, {
      get(stmt, name) {
        const value = Reflect.get(stmt, name);
        if (typeof value !== "function") return value;
        if (["all", "first", "run", "raw"].includes(String(name))) {
          return (...args: unknown[]) => {
            // The request log's row is written behind the response (waitUntil, decision 0250),
            // not on the read's path: it is not one of the read's statements.
            if (!REQUEST_LOG_WRITE.test(text)) calls.push({ kind: "statement", sql: text });
            return value.apply(stmt, args);
          };
        }
        return (...args: unknown[]) => {
          const bound = value.apply(stmt, args);
          return bound && typeof bound === "object" ? watchStatement(bound, text) : bound;
        };
      },
    });
    sqlOf.set(watched, text);
    return watched;
  };
  const watch = (target: D1Database | D1DatabaseSession) =>
    new Proxy(target, {
      get(inner, property) {
        if (property === "prepare") {
          return (text: string) => watchStatement(inner.prepare(text), text);
        }
        if (property === "batch") {
          return (statements: D1PreparedStatement[]) => {
            calls.push({ kind: "batch", sql: statements.map((s) => sqlOf.get(s) ?? "?") });
            return inner.batch(statements);
          };
        }
        if (property === "withSession") {
          return (constraint: string) => {
            sessions.push(constraint);
            return watch((inner as D1Database).withSession(constraint));
          };
        }
        const value = Reflect.get(inner, property);
        return typeof value === "function" ? value.bind(inner) : value;
      },
    });
  return { db: watch(env.DB) as D1Database, calls, sessions };
}

async function call(db: D1Database, path: string, headers: Record<string, string>) {
  const response = await worker.fetch(
    new Request(`${ORIGIN}${path}`, {
      headers: { "cf-connecting-ip": freshIp(), ...headers },
    }) as Parameters<typeof worker.fetch>[0],
    { ...env, DB: db },
    createExecutionContext(),
  );
  return { status: response.status, text: await response.text() };
}

/** The primary's bookmark now. */
async function primaryBookmark(): Promise<string> {
  const session = env.DB.withSession("first-primary");
  await session.prepare("SELECT 1").first();
  return session.getBookmark() ?? "";
}

afterEach(() => setLimiterClock(undefined));

/** Past any lease this isolate holds: the next request of every key asks its limiter. */
function pastTheLease() {
  const later = Date.now() + LEASE_MS + 1;
  setLimiterClock(() => later);
}

const READ_STATEMENT =
  /^select .*"jobs"."id".*json_group_array\(.* from "frames" where "frames"."job_id" = "jobs"."id"\).* from "jobs" where/;

describe("GET /v1/jobs/{id} with a remembered key", () => {
  it("reads an unsettled job in one D1 statement every time, and a settled one once", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    // The extractor is down: this job stays unsettled.
    setExtractor(undefined);
    const queued = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/talk.mp4", count: 2 },
      headers: account.auth,
    });
    expect(["queued", "processing"]).toContain(queued.body.status);
    // The key is remembered from here on; its checks are its limiter's, not D1's.
    for (const [id, statements] of [
      [queued.body.id, [1, 1, 1]],
      [jobId, [1, 0, 0]],
    ] as const) {
      for (const expected of statements) {
        const { db, calls, sessions } = recordingDb();
        const read = await call(db, `/v1/jobs/${id}`, account.auth);
        expect(read.status).toBe(200);
        expect(sessions).toEqual([]);
        // The job and its frames folded into one column; nothing about the key.
        expect(calls).toHaveLength(expected);
        for (const statement of calls) {
          expect(statement.kind).toBe("statement");
          expect(statement.kind === "statement" ? statement.sql : "").toMatch(READ_STATEMENT);
        }
      }
    }
    // A client that sends a bookmark reads in a session on the primary (and is answered its
    // bookmark), settled job or not.
    const { db, calls, sessions } = recordingDb();
    const withBookmark = await call(db, `/v1/jobs/${jobId}`, {
      ...account.auth,
      "x-d1-bookmark": await primaryBookmark(),
    });
    expect(withBookmark.status).toBe(200);
    expect(sessions).toEqual(["first-primary"]);
    expect(calls).toHaveLength(1);
  });

  it("refuses a key revoked elsewhere once its lease here is spent, on every authenticated route", async () => {
    const routes = [
      (jobId: string) => `/v1/jobs/${jobId}`,
      () => `/v1/jobs/${crypto.randomUUID()}`,
      () => "/v1/jobs/not-a-job-id",
      (jobId: string) => `/v1/jobs/${jobId}?wait=true`,
      (jobId: string) => `/v1/jobs/${jobId}#with-bookmark`,
      () => "/v1/jobs",
      () => "/v1/usage",
    ];
    for (const route of routes) {
      setLimiterClock(undefined);
      const account = await createAccount({ plan: "starter" });
      const jobId = await completedJob(account);
      const warm = await call(env.DB, `/v1/jobs/${jobId}`, account.auth);
      expect(warm.status).toBe(200);
      await revokeElsewhere(account.keyId);
      pastTheLease();
      const path = route(jobId);
      // A client that follows its reads with bookmarks takes the session path.
      const [target, withBookmark] = path.split("#");
      const headers = withBookmark
        ? { ...account.auth, "x-d1-bookmark": await primaryBookmark() }
        : account.auth;
      const refused = await call(env.DB, target, headers);
      expect(refused.status, path).toBe(401);
      expect(JSON.parse(refused.text), path).toMatchObject({
        data: { name: "InvalidApiKey", reason: "invalid" },
      });
      // And it stays refused (the isolate forgot it).
      expect((await call(env.DB, `/v1/jobs/${jobId}`, account.auth)).status, path).toBe(401);
    }
  });

  it("admits a key revoked elsewhere no further than the lease it already held", async () => {
    // At 1000 a minute a busy key leases two seconds of its demand at a time.
    const account = await createAccount({ plan: "scale" });
    const jobId = await completedJob(account);
    const t0 = Date.now();
    setLimiterClock(() => t0);
    const burst = await Promise.all(
      Array.from({ length: 8 }, () => call(env.DB, `/v1/jobs/${jobId}`, account.auth)),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(8).fill(200));
    await revokeElsewhere(account.keyId);
    // Within the lease the isolate cannot know; every request past it is refused.
    let admitted = 0;
    for (let i = 0; i < 40; i++) {
      const read = await call(env.DB, `/v1/jobs/${jobId}`, account.auth);
      if (read.status === 200) admitted++;
      else expect(read.status).toBe(401);
    }
    expect(admitted).toBeLessThanOrEqual((LEASE_MS / 1000) * Math.floor(1000 / 60));
  });

  it("stops admitting a revoked key when its lease's time is up, tokens left or not", async () => {
    const lapsed = await createAccount({ plan: "scale" });
    const lapsedJob = await completedJob(lapsed);
    const held = await createAccount({ plan: "scale" });
    const heldJob = await completedJob(held);
    // Later than any lease the setup took: each key's next request leases two, one left.
    const t0 = Date.now() + 10 * LEASE_MS;
    setLimiterClock(() => t0);
    expect((await call(env.DB, `/v1/jobs/${lapsedJob}`, lapsed.auth)).status).toBe(200);
    expect((await call(env.DB, `/v1/jobs/${heldJob}`, held.auth)).status).toBe(200);
    await revokeElsewhere(lapsed.keyId);
    await revokeElsewhere(held.keyId);
    // At the lease's last moment its token still admits (the bound the README states)…
    const last = t0 + LEASE_MS - 1;
    setLimiterClock(() => last);
    expect((await call(env.DB, `/v1/jobs/${heldJob}`, held.auth)).status).toBe(200);
    // …and once its time is up the token left is worth nothing.
    const later = t0 + LEASE_MS + 1;
    setLimiterClock(() => later);
    expect((await call(env.DB, `/v1/jobs/${lapsedJob}`, lapsed.auth)).status).toBe(401);
  });

  it("refuses a key the limiter knows is revoked even while D1 still lists it", async () => {
    // Revocation marks the limiter first; a D1 write that failed after it leaves this state.
    const account = await createAccount({ plan: "starter" });
    await keyLimiter(env, account.keyId).revoke();
    const refused = await call(env.DB, "/v1/usage", account.auth);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text).data).toMatchObject({ name: "InvalidApiKey" });
  });

  it("refuses a revoked key on POST /v1/jobs too", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    expect((await call(env.DB, `/v1/jobs/${jobId}`, account.auth)).status).toBe(200);
    await revokeElsewhere(account.keyId);
    pastTheLease();
    const created = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/talk.mp4", count: 1 },
      headers: account.auth,
    });
    expect(created.status).toBe(401);
    expect(created.body.data.name).toBe("InvalidApiKey");
  });

  it("answers another account's job as missing, remembered or not", async () => {
    const owner = await createAccount({ plan: "starter" });
    const other = await createAccount({ plan: "starter" });
    const jobId = await completedJob(owner);
    expect((await call(env.DB, `/v1/jobs/${jobId}`, other.auth)).status).toBe(404);
    // Remembered once its owner has read it: still missing to anyone else, without D1.
    expect((await call(env.DB, `/v1/jobs/${jobId}`, owner.auth)).status).toBe(200);
    const { db, calls } = recordingDb();
    const again = await call(db, `/v1/jobs/${jobId}`, other.auth);
    expect(again.status).toBe(404);
    expect(JSON.parse(again.text).data.name).toBe("JobNotFound");
    expect(calls.filter((c) => c.kind === "statement" && /"jobs"/.test(c.sql))).toEqual([]);
  });

  it("answers byte for byte what the drizzle read and serializer give", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    const expected = await answerFromDrizzle(jobId);
    for (let i = 0; i < 2; i++) {
      const read = await call(env.DB, `/v1/jobs/${jobId}`, account.auth);
      expect(read.status).toBe(200);
      expect(read.text).toBe(expected);
    }
    expect(JSON.parse(expected).frames.filter((f: { url: unknown }) => f.url)).toHaveLength(3);
  });

  it("reads a remembered job as expired once its expiry passes, as D1 would", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    await env.DB.prepare("UPDATE jobs SET expires_at = ? WHERE id = ?")
      .bind(expiresAt, jobId)
      .run();
    const first = await call(env.DB, `/v1/jobs/${jobId}`, account.auth);
    expect(JSON.parse(first.text)).toMatchObject({ status: "completed", expires_at: expiresAt });
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50));
    const { db, calls } = recordingDb();
    const later = await call(db, `/v1/jobs/${jobId}`, account.auth);
    expect(calls).toEqual([]);
    // The same answer the route gives from D1 (a client with a bookmark always reads it).
    const fromD1 = await call(env.DB, `/v1/jobs/${jobId}`, {
      ...account.auth,
      "x-d1-bookmark": await primaryBookmark(),
    });
    expect(later.text).toBe(fromD1.text);
    const body = JSON.parse(later.text);
    expect(body.status).toBe("expired");
    expect(body.frames.map((f: { url: unknown }) => f.url)).toEqual([null, null, null, null]);
  });
});

describe("prepared selects", () => {
  it("decode rows exactly as drizzle's select does, JSON columns included", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    const db = drizzle(env.DB);
    const job = preparedSelect(jobs, (b) =>
      b
        .select()
        .from(jobs)
        .where(and(eq(jobs.id, sql.placeholder("id")), eq(jobs.accountId, sql.placeholder("a")))),
    );
    const [result] = await env.DB.batch([job.bind(env.DB, { id: jobId, a: account.accountId })]);
    const [viaDrizzle] = await db.select().from(jobs).where(eq(jobs.id, jobId));
    expect(job.rows(result)).toEqual([viaDrizzle]);
    expect(typeof job.rows(result)[0].options).toBe("object");
    // The placeholders are bound, not ignored: another account finds nothing.
    const [none] = await env.DB.batch([job.bind(env.DB, { id: jobId, a: crypto.randomUUID() })]);
    expect(job.rows(none)).toEqual([]);
  });
});

describe("remembered HMACs", () => {
  it("are the ones computed afresh, and a caller changing its copy changes nothing", async () => {
    const secret = `secret-${crypto.randomUUID()}`;
    const message = `job/${crypto.randomUUID()}/a1/frame-0001.jpg\n1900000000`;
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const reference = toHex(
      new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message))),
    );
    const first = await hmacSha256(secret, message);
    expect(toHex(first)).toBe(reference);
    first.fill(0);
    expect(toHex(await hmacSha256(secret, message))).toBe(reference);
    // Another secret or message is another MAC.
    expect(toHex(await hmacSha256(`${secret}x`, message))).not.toBe(reference);
    expect(toHex(await hmacSha256(secret, `${message}0`))).not.toBe(reference);
  });
});
