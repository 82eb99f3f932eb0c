// The authenticated read's fast path (GET /v1/jobs/{id}): a remembered key's revocation check
// rides in the job read's own D1 statement on the primary, its SQL is built once per isolate,
// and file signatures are remembered. Each test checks that a guarantee still holds through
// the new mechanism: revoked keys are refused from the next request on, the answer is the one
// the drizzle path gave, byte for byte, and remembered signatures are the computed ones.

import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it } from "vitest";
import { hmacSha256, toHex } from "../../edge/crypto.ts";
import worker from "../../edge/index.ts";
import { preparedSelect } from "../../edge/storage/prepared-select.ts";
import { jobs } from "../../schema/db.ts";
import { api, createAccount, freshIp, ORIGIN, type TestAccount } from "./support/api.ts";
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
            calls.push({ kind: "statement", sql: text });
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

async function revoke(account: TestAccount) {
  // Straight in D1, as another isolate's dashboard would: this isolate's cache still has it.
  await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
    .bind(new Date().toISOString(), account.keyId)
    .run();
}

describe("GET /v1/jobs/{id} with a remembered key", () => {
  it("checks the key in the job read's one D1 statement, on the primary", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    // The first read looks the key up by hash (and notes its use); the key is remembered.
    expect((await call(env.DB, `/v1/jobs/${jobId}`, account.auth)).status).toBe(200);
    const bookmark = await primaryBookmark();
    // Without a bookmark on the plain binding; with one in a session that starts on the primary.
    for (const [headers, expectedSessions] of [
      [account.auth, []],
      [{ ...account.auth, "x-d1-bookmark": bookmark }, ["first-primary"]],
    ] as const) {
      const { db, calls, sessions } = recordingDb();
      const read = await call(db, `/v1/jobs/${jobId}`, headers);
      expect(read.status).toBe(200);
      expect(sessions).toEqual(expectedSessions);
      // One statement: the key's check, the job and its frames folded into one column.
      expect(calls).toHaveLength(1);
      const [statement] = calls;
      expect(statement.kind).toBe("statement");
      const text = statement.kind === "statement" ? statement.sql : "";
      expect(text).toMatch(/exists \(select .* from "api_keys" .*"revoked_at" is null/);
      expect(text).toMatch(/join "jobs"/);
      expect(text).toMatch(
        /json_group_array\(.* from "frames" where "frames"."job_id" = "jobs"."id"\)/,
      );
    }
  });

  it("refuses a key revoked elsewhere on its next request, on every authenticated route", async () => {
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
      const account = await createAccount({ plan: "starter" });
      const jobId = await completedJob(account);
      const warm = await call(env.DB, `/v1/jobs/${jobId}`, account.auth);
      expect(warm.status).toBe(200);
      await revoke(account);
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

  it("refuses a revoked key on POST /v1/jobs too", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    expect((await call(env.DB, `/v1/jobs/${jobId}`, account.auth)).status).toBe(200);
    await revoke(account);
    const created = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/talk.mp4", count: 1 },
      headers: account.auth,
    });
    expect(created.status).toBe(401);
    expect(created.body.data.name).toBe("InvalidApiKey");
  });

  it("answers another account's job as missing", async () => {
    const owner = await createAccount({ plan: "starter" });
    const other = await createAccount({ plan: "starter" });
    const jobId = await completedJob(owner);
    expect((await call(env.DB, `/v1/jobs/${jobId}`, other.auth)).status).toBe(404);
    const again = await call(env.DB, `/v1/jobs/${jobId}`, other.auth);
    expect(again.status).toBe(404);
    expect(JSON.parse(again.text).data.name).toBe("JobNotFound");
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
