// Reads from the nearest D1 replica through the Sessions API. Miniflare's D1 has
// withSession() and real bookmarks but no replicas, so the worker is called here with a D1
// binding that records every session it opens and, where a test asks for it, stands in for
// a replica that is behind: its sessions' reads are rewritten to miss rows or show an older
// status, while "first-primary" sessions read the real database. What cannot run here (real
// replicas, their lag, D1 routing a bookmark to a replica that is new enough) is written down
// in the README notes.

import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../edge/index.ts";
import { api, createAccount, freshIp, ORIGIN, type TestAccount } from "./support/api.ts";
import { createJobRunBy } from "./support/pipeline.ts";

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** How a replica that is behind answers one SQL statement (or the statement unchanged). */
type Lag = (sql: string) => string;

/** A replica that has not seen the rows yet: SELECTs find nothing, counts are 0. */
const knowsNothing: Lag = (sql) => {
  if (!/^\s*select/i.test(sql)) return sql;
  return /count\(/i.test(sql) ? `SELECT 0 FROM (${sql})` : `SELECT * FROM (${sql}) WHERE 0`;
};

/** A replica from before the settlement: every job still reads `processing`, without frames. */
const beforeSettlement: Lag = (sql) => {
  if (/from "jobs"/.test(sql)) return sql.replace(/"status"/, `'processing'`);
  if (/from "frames"/.test(sql)) return `SELECT * FROM (${sql}) WHERE 0`;
  return sql;
};

function behind(session: D1DatabaseSession, lag: Lag): D1DatabaseSession {
  return {
    prepare: (sql: string) => session.prepare(lag(sql)),
    batch: (statements: D1PreparedStatement[]) => session.batch(statements),
    getBookmark: () => session.getBookmark(),
  } as D1DatabaseSession;
}

/** The real D1 binding, recording the constraint of every session opened through it. */
function recordingDb(replicaLag?: Lag) {
  const sessions: string[] = [];
  const db = new Proxy(env.DB, {
    get(target, property) {
      if (property === "withSession") {
        return (constraint: string) => {
          sessions.push(constraint);
          const session = target.withSession(constraint);
          // Only a session that starts on the primary is sure to read it; others may be behind.
          return replicaLag && constraint !== "first-primary"
            ? behind(session, replicaLag)
            : session;
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, sessions };
}

async function call(
  db: D1Database,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
) {
  const request = new Request(`${ORIGIN}${path}`, {
    method,
    headers: {
      "cf-connecting-ip": freshIp(),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const response = await worker.fetch(
    request as Parameters<typeof worker.fetch>[0],
    { ...env, DB: db },
    createExecutionContext(),
  );
  return {
    status: response.status,
    bookmark: response.headers.get("x-d1-bookmark"),
    body: await response.json<any>(),
  };
}

/** The primary's bookmark now: anything written before it is covered. */
async function primaryBookmark(): Promise<string> {
  const session = env.DB.withSession("first-primary");
  await session.prepare("SELECT 1").first();
  return session.getBookmark() ?? "";
}

async function completedJob(account: TestAccount): Promise<string> {
  const created = await createJobRunBy(account, 2, { framesOk: 2, processedSeconds: 20 });
  expect(created.body.status).toBe("completed");
  return created.body.id;
}

describe("read endpoints read through a D1 session", () => {
  it("GET /v1/jobs, /v1/usage and /v1/demo/{id} open an unconstrained session and answer its bookmark", async () => {
    const account = await createAccount({ plan: "starter" });
    const demo = await api("POST", "/v1/demo", { body: { url: "https://cdn.example.com/a.mp4" } });
    expect(demo.status).toBe(201);
    for (const path of ["/v1/jobs", "/v1/usage", `/v1/demo/${demo.body.id}`]) {
      const { db, sessions } = recordingDb();
      const read = await call(db, "GET", path, {
        headers: path.includes("demo") ? {} : account.auth,
      });
      expect(read.status, path).toBe(200);
      expect(sessions, path).toEqual(["first-unconstrained"]);
      expect(read.bookmark, path).toMatch(BOOKMARK);
    }
  });

  // Its key's revocation check reads the primary on every request anyway; the job is read in
  // that same batch (edge/jobs/read.ts), so no replica is asked and none can be behind.
  it("GET /v1/jobs/{id} reads the primary: in a session answering its bookmark when sent one", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    const plain = recordingDb(knowsNothing);
    const read = await call(plain.db, "GET", `/v1/jobs/${jobId}`, { headers: account.auth });
    expect(read.status).toBe(200);
    expect(read.body.status).toBe("completed");
    expect(read.body.frames).toHaveLength(2);
    expect(plain.sessions).toEqual([]);
    expect(read.bookmark).toBeNull();

    const sent = await primaryBookmark();
    const chained = recordingDb(knowsNothing);
    const again = await call(chained.db, "GET", `/v1/jobs/${jobId}`, {
      headers: { ...account.auth, "x-d1-bookmark": sent },
    });
    expect(again.status).toBe(200);
    expect(again.body.frames).toHaveLength(2);
    expect(chained.sessions).toEqual(["first-primary"]);
    expect(again.bookmark).toMatch(BOOKMARK);
    expect((again.bookmark ?? "") >= sent).toBe(true);
  });

  it("a bookmark sent back constrains the session: the answer is read at least that late", async () => {
    const account = await createAccount();
    const first = await call(recordingDb().db, "GET", "/v1/usage", { headers: account.auth });
    const sent = first.bookmark ?? "";
    expect(sent).toMatch(BOOKMARK);
    const { db, sessions } = recordingDb();
    const again = await call(db, "GET", "/v1/usage", {
      headers: { ...account.auth, "x-d1-bookmark": sent },
    });
    expect(again.status).toBe(200);
    expect(sessions).toEqual([sent]);
    expect((again.bookmark ?? "") >= sent).toBe(true);
    // A bookmark later than anything read so far (as one from another region's write would be):
    // the session holds on to it rather than answer from before it.
    const later = `ffffff00-${sent.slice(9)}`;
    const ahead = await call(recordingDb().db, "GET", "/v1/usage", {
      headers: { ...account.auth, "x-d1-bookmark": later },
    });
    expect(ahead.bookmark).toBe(later);
  });

  it("refuses a bookmark this API could not have given, before it reaches D1", async () => {
    const account = await createAccount();
    for (const bad of [
      "garbage",
      "first-primary",
      `${"0".repeat(8)}-${"0".repeat(8)}`,
      "x".repeat(5000),
    ]) {
      const { db, sessions } = recordingDb();
      const read = await call(db, "GET", "/v1/jobs", {
        headers: { ...account.auth, "x-d1-bookmark": bad },
      });
      expect(read.status).toBe(400);
      expect(read.body.data.name).toBe("InvalidRequest");
      expect(read.body.message).toContain("X-D1-Bookmark");
      expect(sessions).toEqual([]);
    }
  });

  it("other routes stay on the primary binding and answer no bookmark", async () => {
    const account = await createAccount();
    const { db, sessions } = recordingDb();
    const pricing = await call(db, "GET", "/v1/pricing");
    expect(pricing.status).toBe(200);
    expect(pricing.bookmark).toBeNull();
    const wrongKey = await call(db, "GET", "/v1/jobs", {
      headers: { authorization: `${account.auth.authorization}x` },
    });
    expect(wrongKey.status).toBe(401);
    expect(sessions).toEqual([]);
  });
});

describe("a client reads its own writes", () => {
  it("POST /v1/jobs answers a bookmark taken on the primary after the write, and reads with it find the job", async () => {
    const account = await createAccount({ plan: "starter" });
    const before = await primaryBookmark();
    const { db, sessions } = recordingDb();
    const created = await call(db, "POST", "/v1/jobs", {
      headers: account.auth,
      body: { url: "https://cdn.example.com/talk.mp4", count: 2 },
    });
    expect(created.status).toBe(201);
    expect(sessions).toEqual(["first-primary"]);
    expect(created.bookmark).toMatch(BOOKMARK);
    expect((created.bookmark ?? "") > before).toBe(true);

    const follow = recordingDb();
    const read = await call(follow.db, "GET", `/v1/jobs/${created.body.id}`, {
      headers: { ...account.auth, "x-d1-bookmark": created.bookmark ?? "" },
    });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(created.body.id);
    // The primary is at least as new as any bookmark: the one sent is met there.
    expect(follow.sessions).toEqual(["first-primary"]);
    expect((read.bookmark ?? "") >= (created.bookmark ?? "")).toBe(true);
  });

  it("POST /v1/demo answers a bookmark that covers the new demo", async () => {
    const before = await primaryBookmark();
    const { db, sessions } = recordingDb();
    const created = await call(db, "POST", "/v1/demo", {
      body: { url: "https://cdn.example.com/clip.mp4" },
    });
    expect(created.status).toBe(201);
    expect(sessions).toEqual(["first-primary"]);
    expect((created.bookmark ?? "") > before).toBe(true);
  });

  it("a job a replica does not know yet is looked up on the primary before answering 404", async () => {
    const account = await createAccount({ plan: "starter" });
    const demo = await api("POST", "/v1/demo", { body: { url: "https://cdn.example.com/b.mp4" } });
    const demoRead = await call(recordingDb(knowsNothing).db, "GET", `/v1/demo/${demo.body.id}`);
    expect(demoRead.status).toBe(200);
    expect(demoRead.body.id).toBe(demo.body.id);

    // A job that exists nowhere is still 404, after asking the primary too.
    const missing = recordingDb(knowsNothing);
    const none = await call(missing.db, "GET", `/v1/jobs/${crypto.randomUUID()}`, {
      headers: account.auth,
    });
    expect(none.status).toBe(404);
    expect(none.body.data.name).toBe("JobNotFound");
    expect(missing.sessions).toEqual([]);
  });

  it("a list from a replica that is behind may miss the newest job (why the bookmark exists)", async () => {
    const account = await createAccount({ plan: "starter" });
    await completedJob(account);
    const list = await call(recordingDb(knowsNothing).db, "GET", "/v1/jobs", {
      headers: account.auth,
    });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(0);
    expect(list.body.data).toEqual([]);
    const primary = await call(recordingDb().db, "GET", "/v1/jobs", { headers: account.auth });
    expect(primary.body.data).toHaveLength(1);
  });
});

describe("wait=true", () => {
  it("never answers from a replica behind the settlement it waits for", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account);
    // A replica from before the settlement is never asked: the read is on the primary.
    const fresh = await call(recordingDb(beforeSettlement).db, "GET", `/v1/jobs/${jobId}`, {
      headers: account.auth,
    });
    expect(fresh.body.status).toBe("completed");

    const { db, sessions } = recordingDb(beforeSettlement);
    const waited = await call(db, "GET", `/v1/jobs/${jobId}?wait=true`, {
      headers: { ...account.auth, "x-d1-bookmark": await primaryBookmark() },
    });
    expect(waited.status).toBe(200);
    expect(waited.body.status).toBe("completed");
    expect(waited.body.frames.map((f: { url: string | null }) => f.url !== null)).toEqual([
      true,
      true,
    ]);
    // Every read of it was on the primary.
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.every((constraint) => constraint === "first-primary")).toBe(true);
    expect(waited.bookmark).toMatch(BOOKMARK);
  });
});

describe("the OpenAPI document", () => {
  it("declares X-D1-Bookmark on the read operations' requests and on their and the creates' answers", async () => {
    const doc = (await api("GET", "/v1/openapi.json")).body;
    const reads = [
      ["/jobs", "get", "200"],
      ["/jobs/{id}", "get", "200"],
      ["/usage", "get", "200"],
      ["/demo/{id}", "get", "200"],
    ];
    for (const [path, method, status] of reads) {
      const operation = doc.paths[path][method];
      expect(
        operation.parameters.some(
          (p: { in: string; name: string; required?: boolean }) =>
            p.in === "header" && p.name === "x-d1-bookmark" && !p.required,
        ),
        path,
      ).toBe(true);
      expect(operation.responses[status].headers["X-D1-Bookmark"], path).toBeDefined();
    }
    expect(doc.paths["/jobs"].post.responses["201"].headers["X-D1-Bookmark"]).toBeDefined();
    expect(doc.paths["/demo"].post.responses["201"].headers["X-D1-Bookmark"]).toBeDefined();
  });
});
