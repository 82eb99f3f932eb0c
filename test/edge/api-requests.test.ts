// The account's request log (decision 0250): each API-key request to /v1/* and /mcp is recorded
// behind its answer with the X-Request-Id it was answered, the method, the route's pattern (never
// the path's ids or its query), the status and the latency; nothing for callers no key
// authenticated; another account never sees it; the Requests page finds a quoted id, pages, and
// the bound (1,000 an account, 7 days) holds on write and in the cron.
import { env, exports } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it, vi } from "vitest";
import { runScheduledMaintenance } from "../../edge/maintenance.ts";
import { pruneApiRequests, recordApiRequest } from "../../edge/storage/api-requests.ts";
import { API_REQUESTS_KEPT, routePattern } from "../../schema/api-requests.ts";
import { api, createAccount, freshIp, ORIGIN } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { createJobRunBy } from "./support/pipeline.ts";
import { signedInWithKey } from "./support/visitor.ts";

interface Row {
  id: number;
  account_id: string;
  request_id: string;
  method: string;
  route: string;
  status: number;
  error: string | null;
  latency_ms: number;
  created_at: string;
}

async function rowsWithRequestId(requestId: string): Promise<Row[]> {
  const { results } = await env.DB.prepare("SELECT * FROM api_requests WHERE request_id = ?")
    .bind(requestId)
    .all<Row>();
  return results;
}

/** The row the request answered with `requestId` left, once its write behind the answer lands. */
async function recorded(requestId: string): Promise<Row> {
  let rows: Row[] = [];
  await vi.waitFor(
    async () => {
      rows = await rowsWithRequestId(requestId);
      expect(rows).toHaveLength(1);
    },
    { timeout: 5000, interval: 20 },
  );
  return rows[0];
}

/** A signed-in visitor whose account also has an API key. */
const textOf = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

/** `count` rows for the account, `minutesAgo` apart from now backwards, ids req-<prefix>-<n>. */
async function seed(accountId: string, count: number, prefix: string, startMinutesAgo = 0) {
  const now = Date.now();
  const statements = [];
  for (let i = 0; i < count; i++) {
    statements.push(
      env.DB.prepare(
        `INSERT INTO api_requests (account_id, request_id, method, route, status, latency_ms, created_at)
         VALUES (?, ?, 'GET', '/v1/usage', 200, 5, ?)`,
      ).bind(
        accountId,
        `req-${prefix}-${i}`,
        new Date(now - (startMinutesAgo + count - i) * 60_000).toISOString(),
      ),
    );
  }
  for (let i = 0; i < statements.length; i += 100) {
    await env.DB.batch(statements.slice(i, i + 100));
  }
}

async function countFor(accountId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM api_requests WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("recording", () => {
  it("records a key's request with the id it was answered, its route, status and latency", async () => {
    const account = await createAccount();
    const started = Date.now();
    const res = await api("GET", "/v1/usage", { headers: account.auth });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id") ?? "";
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const row = await recorded(requestId);
    expect(row).toMatchObject({
      account_id: account.accountId,
      method: "GET",
      route: "/v1/usage",
      status: 200,
      error: null,
    });
    expect(row.latency_ms).toBeGreaterThan(0);
    expect(row.latency_ms).toBeLessThan(Date.now() - started + 1000);
    expect(Date.parse(row.created_at)).toBeGreaterThanOrEqual(started - 1000);
  });

  it("keeps the route's pattern, never the id in the path or the query, and errors' statuses", async () => {
    const account = await createAccount();
    const jobId = crypto.randomUUID();
    const ownId = `support-case-${crypto.randomUUID()}`;
    const missing = await api("GET", `/v1/jobs/${jobId}?token=sekrit&wait=false`, {
      headers: { ...account.auth, "x-request-id": ownId },
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-request-id")).toBe(ownId);
    const row = await recorded(ownId);
    expect(row).toMatchObject({
      method: "GET",
      route: "/v1/jobs/{id}",
      status: 404,
      error: "JobNotFound",
    });
    expect(JSON.stringify(row)).not.toContain(jobId);
    expect(JSON.stringify(row)).not.toContain("sekrit");

    const bad = await api("POST", "/v1/jobs", { body: { url: 42 }, headers: account.auth });
    expect(bad.status).toBe(400);
    expect(await recorded(bad.headers.get("x-request-id") ?? "")).toMatchObject({
      method: "POST",
      route: "/v1/jobs",
      status: 400,
      error: bad.body.data.name,
      account_id: account.accountId,
    });
    expect(bad.body.data.name).toBe("InvalidUrl");
    // A body that is not JSON ends in the error shape without an ApiError thrown by a handler.
    const notJson = await api("POST", "/v1/jobs", {
      rawBody: "{not json",
      headers: account.auth,
    });
    expect(notJson.status).toBe(400);
    expect(await recorded(notJson.headers.get("x-request-id") ?? "")).toMatchObject({
      status: 400,
      error: notJson.body.data.name,
    });
  });

  it("records MCP requests made with a key", async () => {
    const account = await createAccount();
    const requestId = `mcp-${crypto.randomUUID()}`;
    const res = await exports.default.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        ...account.auth,
        "cf-connecting-ip": freshIp(),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        "x-request-id": requestId,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(await recorded(requestId)).toMatchObject({
      account_id: account.accountId,
      method: "POST",
      route: "/mcp",
      status: 200,
    });
  });

  it("records nothing for a caller no key authenticated", async () => {
    const account = await createAccount();
    const callers: Record<string, string>[] = [
      {},
      { authorization: "Basic dXNlcjpwYXNz" },
      {
        authorization: `Bearer ${account.key.slice(0, -1)}${account.key.endsWith("A") ? "B" : "A"}`,
      },
      { "x-api-key": "not-a-key" },
    ];
    const ids: string[] = [];
    for (const headers of callers) {
      const requestId = `anonymous-${crypto.randomUUID()}`;
      ids.push(requestId);
      const res = await api("GET", "/v1/usage", {
        headers: { ...headers, "x-request-id": requestId },
      });
      expect(res.status).toBe(401);
    }
    // The public routes and unknown paths are not an account's requests either.
    const pricingId = `pricing-${crypto.randomUUID()}`;
    expect(
      (await api("GET", "/v1/pricing", { headers: { ...account.auth, "x-request-id": pricingId } }))
        .status,
    ).toBe(200);
    const unknownId = `unknown-${crypto.randomUUID()}`;
    expect(
      (await api("GET", "/v1/nothing-here", { headers: { "x-request-id": unknownId } })).status,
    ).toBe(404);
    // A request recorded after them proves their writes would have landed by now.
    const later = await api("GET", "/v1/usage", { headers: account.auth });
    await recorded(later.headers.get("x-request-id") ?? "");
    for (const id of [...ids, unknownId]) expect(await rowsWithRequestId(id)).toEqual([]);
    for (const id of [pricingId]) expect(await rowsWithRequestId(id)).toEqual([]);
    expect(await countFor(account.accountId)).toBe(1);
  });

  it("records a key's requests up to its rate limit, and not the ones the limit refused", async () => {
    const account = await createAccount(); // free: 30 requests a minute
    for (let i = 0; i < 30; i++) {
      expect((await api("GET", "/v1/usage", { headers: account.auth })).status).toBe(200);
    }
    const limitedId = `limited-${crypto.randomUUID()}`;
    const limited = await api("GET", "/v1/usage", {
      headers: { ...account.auth, "x-request-id": limitedId },
    });
    expect(limited.status).toBe(429);
    await vi.waitFor(async () => expect(await countFor(account.accountId)).toBe(30), {
      timeout: 5000,
      interval: 20,
    });
    // Its write, had there been one, would have landed beside the others by now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rowsWithRequestId(limitedId)).toEqual([]);
    expect(await countFor(account.accountId)).toBe(30);
  });

  it("spells Hono's route paths as the API document does", () => {
    expect(routePattern("/v1/jobs/:id")).toBe("/v1/jobs/{id}");
    expect(routePattern("/v1/jobs/:id/frames/:index{[0-9]+}")).toBe("/v1/jobs/{id}/frames/{index}");
    expect(routePattern("/mcp")).toBe("/mcp");
  });
});

describe("the Requests page", () => {
  it("finds a quoted request id, and another account never sees it", async () => {
    const owner = await signedInWithKey();
    const stranger = await signedInWithKey();
    const res = await api("GET", "/v1/usage", { headers: owner.auth });
    const requestId = res.headers.get("x-request-id") ?? "";
    await recorded(requestId);

    const found = await owner.visitor.get(
      `/dashboard/requests?request_id=${encodeURIComponent(`  ${requestId} `)}`,
    );
    expect(found.status).toBe(200);
    const rows = [...found.text.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1]);
    expect(rows).toEqual([requestId]);
    const text = textOf(found.text);
    expect(text).toContain("1 request matches.");
    expect(text).toMatch(/GET \/v1\/usage 200 \d+ ms/);
    // Its start finds it too.
    const byStart = await owner.visitor.get(
      `/dashboard/requests?request_id=${requestId.slice(0, 13)}`,
    );
    expect(byStart.text).toContain(`data-request-id="${requestId}"`);

    // A request that created a job links to it; an error shows its name.
    setExtractor(() => Response.json({ accepted: true }, { status: 202 }));
    const created = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/clips/talk.mp4", count: 2 },
      headers: owner.auth,
    });
    expect(created.status).toBe(201);
    const createdId = created.headers.get("x-request-id") ?? "";
    await recorded(createdId);
    const createdRow = await owner.visitor.get(`/dashboard/requests?request_id=${createdId}`);
    expect(createdRow.text).toContain(`href="/dashboard/jobs/${created.body.id}"`);
    expect(textOf(createdRow.text)).toMatch(/POST \/v1\/jobs created job [0-9a-f]{8} 201/);
    const refused = await api("GET", `/v1/jobs/${crypto.randomUUID()}`, { headers: owner.auth });
    const refusedId = refused.headers.get("x-request-id") ?? "";
    await recorded(refusedId);
    const refusedRow = await owner.visitor.get(`/dashboard/requests?request_id=${refusedId}`);
    expect(textOf(refusedRow.text)).toMatch(/GET \/v1\/jobs\/\{id\} 404 JobNotFound \d+ ms/);

    const theirs = await stranger.visitor.get(`/dashboard/requests?request_id=${requestId}`);
    expect(theirs.status).toBe(200);
    expect(theirs.text).not.toContain(`data-request-id="${requestId}"`);
    expect(textOf(theirs.text)).toContain("No request with an id starting with");
    const all = await stranger.visitor.get("/dashboard/requests");
    expect(all.text).not.toContain(requestId);
    expect(textOf(all.text)).toContain("No API requests in the last 7 days.");
    // The page itself is a session's, never an API key's.
    const withKey = await exports.default.fetch(`${ORIGIN}/dashboard/requests`, {
      headers: { ...owner.auth, "cf-connecting-ip": freshIp() },
      redirect: "manual",
    });
    expect(withKey.status).toBe(303);
    expect(withKey.headers.get("location")).toMatch(/^\/sign-in\?next=/);
  });

  it("a failed job's page links its creating request to the Requests page, which finds it", async () => {
    const owner = await signedInWithKey();
    const failed = await createJobRunBy(owner, 2, {
      fail: { name: "PrivateContent", message: "HTTP 403 from origin", userMessage: "" },
    });
    expect(failed.body.status).toBe("failed");
    const createdBy = failed.headers.get("x-request-id") ?? "";
    await recorded(createdBy);
    const jobPage = await owner.visitor.get(`/dashboard/jobs/${failed.body.id}`);
    const link = `/dashboard/requests?request_id=${encodeURIComponent(createdBy)}`;
    expect(jobPage.text).toContain(`href="${link}"`);
    const found = await owner.visitor.get(link);
    expect([...found.text.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1])).toEqual([
      createdBy,
    ]);
    expect(found.text).toContain(`href="/dashboard/jobs/${failed.body.id}"`);
  });

  it("pages newest first, keeping the search on every page", async () => {
    const owner = await signedInWithKey();
    await seed(owner.accountId, 55, "page");
    const first = await owner.visitor.get("/dashboard/requests");
    const ids = [...first.text.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toHaveLength(50);
    expect(ids[0]).toBe("req-page-54");
    expect(ids[49]).toBe("req-page-5");
    expect(first.text).toContain('href="/dashboard/requests?page=2"');
    const second = await owner.visitor.get("/dashboard/requests?page=2");
    expect([...second.text.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1])).toEqual([
      "req-page-4",
      "req-page-3",
      "req-page-2",
      "req-page-1",
      "req-page-0",
    ]);

    await seed(owner.accountId, 60, "many");
    const searched = await owner.visitor.get("/dashboard/requests?request_id=req-many-");
    expect(textOf(searched.text)).toContain("60 requests match.");
    expect(searched.text).toContain('href="/dashboard/requests?request_id=req-many-&amp;page=2"');
  });

  it("does not list requests older than 7 days, even before the cron prunes them", async () => {
    const owner = await signedInWithKey();
    await seed(owner.accountId, 2, "old", 8 * 24 * 60);
    await seed(owner.accountId, 1, "new");
    const page = await owner.visitor.get("/dashboard/requests");
    expect([...page.text.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1])).toEqual([
      "req-new-0",
    ]);
  });
});

describe("the bound", () => {
  it("keeps the newest 1,000 an account, on write and in the cron, and drops what is 7 days old", async () => {
    const busy = await createAccount();
    const quiet = await createAccount();
    await seed(busy.accountId, API_REQUESTS_KEPT + 30, "busy");
    await seed(quiet.accountId, 3, "stale", 8 * 24 * 60);
    await seed(quiet.accountId, 2, "fresh");
    expect(await countFor(busy.accountId)).toBe(API_REQUESTS_KEPT + 30);

    await runScheduledMaintenance(env, Date.now());
    expect(await countFor(busy.accountId)).toBe(API_REQUESTS_KEPT);
    const oldest = await env.DB.prepare(
      "SELECT request_id FROM api_requests WHERE account_id = ? ORDER BY id LIMIT 1",
    )
      .bind(busy.accountId)
      .first<{ request_id: string }>();
    expect(oldest?.request_id).toBe("req-busy-30");
    const { results: quietRows } = await env.DB.prepare(
      "SELECT request_id FROM api_requests WHERE account_id = ? ORDER BY id",
    )
      .bind(quiet.accountId)
      .all<{ request_id: string }>();
    expect(quietRows.map((r) => r.request_id)).toEqual(["req-fresh-0", "req-fresh-1"]);

    // A write that trims brings an account over the bound back to it in the same batch.
    await seed(busy.accountId, 10, "more");
    const db = drizzle(env.DB);
    const entry = {
      account_id: busy.accountId,
      request_id: "req-trimming",
      method: "GET",
      route: "/v1/usage",
      status: 200,
      error: null,
      latency_ms: 3,
      created_at: new Date().toISOString(),
    };
    await recordApiRequest(db, entry, false);
    expect(await countFor(busy.accountId)).toBe(API_REQUESTS_KEPT + 11);
    await recordApiRequest(db, { ...entry, request_id: "req-trimmed" }, true);
    expect(await countFor(busy.accountId)).toBe(API_REQUESTS_KEPT);
    expect(await rowsWithRequestId("req-trimmed")).toHaveLength(1);

    // The cron trims only the accounts that wrote since its window began.
    await seed(busy.accountId, 5, "idle", 60);
    await pruneApiRequests(db, Date.now(), Date.now() - 30 * 60_000);
    expect(await countFor(busy.accountId)).toBe(API_REQUESTS_KEPT);
  });
});
