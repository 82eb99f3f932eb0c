import { env, exports } from "cloudflare:workers";
import { unzipSync } from "fflate";
import { describe, expect, it, vi } from "vitest";
import { checkFileSignature } from "../../edge/files.ts";
import { keyLimiter } from "../../edge/middleware/rate-limit.ts";
import { accountIdFor, issueKeyStatements } from "../../schema/accounts.ts";
import { api, ORIGIN } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { frameBytes, internal, postResult, tokenFor, uploadAttempt } from "./support/pipeline.ts";
import { PRICES, standInStripeApi, stripeEnv } from "./support/stripe-stand-in.ts";
import { Visitor } from "./support/visitor.ts";

/** Signs a new visitor in with the code the local outbox holds, as a person would. */
async function signedIn(email = `${crypto.randomUUID()}@example.com`) {
  const visitor = new Visitor();
  expect((await visitor.post("/sign-in", { email })).status).toBe(303);
  const mail = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
  )
    .bind(email)
    .first<{ code: string }>();
  expect((await visitor.post("/sign-in/code", { email, code: mail?.code ?? "" })).status).toBe(303);
  return { visitor, email, accountId: await accountIdFor(email) };
}

const KEY_PATTERN = /stills_live_[0-9A-Za-z]{38}/g;

/** POST, redirect, GET: the key is on the page the 303 leads to (and only there). */
async function createKeyOnDashboard(visitor: Visitor, name: string) {
  const res = await visitor.post("/dashboard/keys", { name });
  expect(res.status).toBe(303);
  expect(res.text).not.toMatch(KEY_PATTERN);
  const location = res.headers.get("location") ?? "";
  expect(location).toMatch(/^\/dashboard\/keys\?new=[A-Za-z0-9_-]{43}$/);
  const shown = await visitor.get(location);
  expect(shown.status).toBe(200);
  const keys = [...new Set(shown.text.match(KEY_PATTERN) ?? [])];
  expect(keys).toHaveLength(1);
  return { key: keys[0] ?? "", page: shown.text, location };
}

/** Text of the page without tags, to check what a person reads. */
const textOf = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("API keys", () => {
  it("a new address signs in, creates a key, and the key shows the free plan with 60 credits", async () => {
    const { visitor } = await signedIn();
    const { key, page } = await createKeyOnDashboard(visitor, "laptop");
    expect(page).toContain("only time it is shown");
    expect(page).toContain(`value="${key}"`);
    expect(page).toContain("data-copy-from");

    const usage = await api("GET", "/v1/usage", { headers: { authorization: `Bearer ${key}` } });
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({
      plan: "free",
      credits: { available: 60, plan: 60, pack: 0, monthly_allowance: 60 },
    });
    expect(usage.body.recent_ledger).toEqual([
      expect.objectContaining({ kind: "grant", plan_delta: 60, pack_delta: 0 }),
    ]);
  });

  it("shows a new key once, from a one-time store: the same address again shows nothing", async () => {
    const { visitor, accountId } = await signedIn();
    const { key, location } = await createKeyOnDashboard(visitor, "one showing");
    const again = await visitor.get(location);
    expect(again.status).toBe(200);
    expect(again.text).not.toContain(key);
    expect(again.text).toContain("A new key is shown once, right after it is created");
    const rows = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM api_keys WHERE account_id = ?1) AS keys, (SELECT count(*) FROM key_reveals WHERE account_id = ?1) AS waiting",
    )
      .bind(accountId)
      .first<{ keys: number; waiting: number }>();
    expect(rows).toEqual({ keys: 1, waiting: 0 });
  });

  it("a new key's address shows nothing to another account, and keeps it for its owner", async () => {
    const owner = await signedIn();
    const res = await owner.visitor.post("/dashboard/keys", { name: "not yours" });
    const location = res.headers.get("location") ?? "";
    const stranger = await signedIn();
    const seen = await stranger.visitor.get(location);
    expect(seen.text).not.toMatch(KEY_PATTERN);
    // The stranger's visit took nothing: the owner still sees the key, once.
    const shown = await owner.visitor.get(location);
    expect(shown.text.match(KEY_PATTERN)?.length).toBeGreaterThan(0);
  });

  it("shows a key once: afterwards the list has its hint and name, never the key", async () => {
    const { visitor, accountId } = await signedIn();
    const { key } = await createKeyOnDashboard(visitor, "production server");
    const list = await visitor.get("/dashboard/keys");
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(key);
    expect(list.text).not.toContain(key.slice(16));
    expect(list.text).toContain(key.slice(0, 16));
    expect(textOf(list.text)).toContain("production server");
    expect(textOf(list.text)).toContain("never");

    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE account_id = ?")
      .bind(accountId)
      .first<Record<string, string>>();
    expect(row?.name).toBe("production server");
    expect(JSON.stringify(row)).not.toContain(key.slice(12));
  });

  it("records when a key was last used, at most about once a minute", async () => {
    const { visitor, accountId } = await signedIn();
    const { key } = await createKeyOnDashboard(visitor, "ci");
    const auth = { authorization: `Bearer ${key}` };
    await api("GET", "/v1/usage", { headers: auth });
    const lastUsed = async () =>
      (
        await env.DB.prepare("SELECT last_used_at FROM api_keys WHERE account_id = ?")
          .bind(accountId)
          .first<{ last_used_at: string | null }>()
      )?.last_used_at ?? null;
    await vi.waitFor(async () => expect(await lastUsed()).not.toBeNull(), { timeout: 5000 });
    const first = await lastUsed();
    expect(Math.abs(Date.parse(first ?? "") - Date.now())).toBeLessThan(60_000);
    for (let i = 0; i < 3; i++) await api("GET", "/v1/usage", { headers: auth });
    await new Promise((r) => setTimeout(r, 200));
    expect(await lastUsed()).toBe(first);
    const list = await visitor.get("/dashboard/keys");
    expect(textOf(list.text)).not.toContain("never");
  });

  it("a revoked key is refused from the very next request on", async () => {
    const { visitor, accountId } = await signedIn();
    const { key } = await createKeyOnDashboard(visitor, "to revoke");
    const auth = { authorization: `Bearer ${key}` };
    expect((await api("GET", "/v1/usage", { headers: auth })).status).toBe(200);
    const row = await env.DB.prepare("SELECT id FROM api_keys WHERE account_id = ?")
      .bind(accountId)
      .first<{ id: string }>();

    const revoked = await visitor.post(`/dashboard/keys/${row?.id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe("/dashboard/keys?notice=revoked");
    const refused = await api("GET", "/v1/usage", { headers: auth });
    expect(refused.status).toBe(401);
    expect(refused.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
    const list = await visitor.get("/dashboard/keys?notice=revoked");
    expect(list.text).toContain("The key is revoked");
    expect(list.text).not.toContain(key.slice(0, 16));
  });

  it("a key revoked here is refused by its rate limiter, which other isolates ask within a lease", async () => {
    const { visitor, accountId } = await signedIn();
    const { key } = await createKeyOnDashboard(visitor, "cached");
    const auth = { "x-api-key": key };
    expect((await api("GET", "/v1/usage", { headers: auth })).status).toBe(200);
    const row = await env.DB.prepare("SELECT id FROM api_keys WHERE account_id = ?")
      .bind(accountId)
      .first<{ id: string }>();
    const limiter = keyLimiter(env, row?.id ?? "");
    expect(await limiter.take(120)).toMatchObject({ allowed: true });
    expect((await visitor.post(`/dashboard/keys/${row?.id}/revoke`, {})).status).toBe(303);
    // What another isolate holding this key in memory hears when its lease runs out.
    expect(await limiter.take(120)).toMatchObject({ allowed: false, granted: 0, revoked: true });
    const stored = await env.DB.prepare("SELECT revoked_at FROM api_keys WHERE id = ?")
      .bind(row?.id)
      .first<{ revoked_at: string | null }>();
    expect(stored?.revoked_at).toEqual(expect.any(String));
  });

  it("another account's key cannot be revoked from here", async () => {
    const other = await signedIn();
    const { key } = await createKeyOnDashboard(other.visitor, "theirs");
    const theirs = await env.DB.prepare("SELECT id FROM api_keys WHERE account_id = ?")
      .bind(other.accountId)
      .first<{ id: string }>();
    const { visitor } = await signedIn();
    const res = await visitor.post(`/dashboard/keys/${theirs?.id}/revoke`, {});
    expect(res.headers.get("location")).toBe("/dashboard/keys?notice=not-found");
    expect(
      (await api("GET", "/v1/usage", { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
  });

  it.each([
    ["an empty name", "   ", "Give the key a name"],
    ["a name too long", "x".repeat(61), "at most 60 characters"],
  ])("refuses %s and creates nothing", async (_label, name, message) => {
    const { visitor, accountId } = await signedIn();
    const res = await visitor.post("/dashboard/keys", { name });
    expect(res.status).toBe(400);
    expect(res.text).toContain(message);
    expect(res.text).not.toMatch(KEY_PATTERN);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });

  it("names are shown as text, never as markup", async () => {
    const { visitor } = await signedIn();
    await createKeyOnDashboard(visitor, `<img src=x onerror=alert(1)>`);
    const list = await visitor.get("/dashboard/keys");
    expect(list.text).not.toContain("<img src=x");
    expect(list.text).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });

  it("a key form from another site is refused and creates no key", async () => {
    const { visitor, accountId } = await signedIn();
    const res = await visitor.post(
      "/dashboard/keys",
      { name: "forged" },
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).data.name).toBe("InvalidRequest");
    const count = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });
});

describe("pages need a session", () => {
  it.each([
    "/dashboard",
    "/dashboard/keys",
    "/dashboard/jobs",
    "/dashboard/billing",
    "/dashboard/webhooks",
  ])("%s without one goes to sign-in and back", async (path) => {
    const res = await new Visitor().get(path);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/sign-in?next=${encodeURIComponent(path)}`);
  });

  it("a form posted without a session creates nothing and goes to sign-in", async () => {
    const res = await new Visitor().post("/dashboard/keys", { name: "x" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/sign-in?next=%2Fdashboard");
  });
});

describe("jobs", () => {
  /** A job of three frames run by a stand-in extractor that also stores thumbnails or not. */
  async function finishedJob(key: string, thumbnails: boolean) {
    const attempts: string[] = [];
    setExtractor(async (request) => {
      const result = await uploadAttempt(request, { framesOk: 3, processedSeconds: 30 });
      const token = await tokenFor(result.kind, result.job_id, result.attempt_id);
      for (const frame of thumbnails ? result.frames : []) {
        const thumbKey = frame.key?.replace(/frame-(\d+)\.jpg$/, "thumb-$1.jpg") ?? "";
        const put = await internal(
          `/internal/files/${thumbKey}`,
          { method: "PUT", body: thumbBytes(frame.index) },
          token,
        );
        expect(put.status).toBe(200);
        frame.thumb_key = thumbKey;
      }
      await postResult(result, token);
      attempts.push(result.attempt_id);
      return Response.json({ status: "completed" });
    });
    const auth = { authorization: `Bearer ${key}` };
    const created = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/talk.mp4", count: 3 },
      headers: auth,
    });
    expect(created.status).toBe(201);
    const jobId = created.body.id as string;
    await vi.waitFor(
      async () =>
        expect((await api("GET", `/v1/jobs/${jobId}`, { headers: auth })).body.status).toBe(
          "completed",
        ),
      { timeout: 10_000, interval: 100 },
    );
    return { jobId, attemptId: attempts[0] };
  }

  const thumbBytes = (index: number) => new TextEncoder().encode(`THUMB:${index}`);

  it("lists a finished job with a signed thumbnail of its first good frame, one click from its frames", async () => {
    const { visitor } = await signedIn();
    const empty = await visitor.get("/dashboard/jobs");
    expect(textOf(empty.text)).toContain("No jobs yet");
    const { key } = await createKeyOnDashboard(visitor, "jobs");
    const { jobId, attemptId } = await finishedJob(key, true);

    const list = await visitor.get("/dashboard/jobs");
    expect(list.status).toBe(200);
    expect(list.text).toContain(`href="/dashboard/jobs/${jobId}"`);
    expect(textOf(list.text)).toContain("Completed");
    expect(textOf(list.text)).toContain("count 3 · jpg · 720p");
    const thumbnail = /<img class="thumb" src="([^"]+)"/
      .exec(list.text)?.[1]
      ?.replaceAll("&amp;", "&");
    expect(thumbnail).toBeDefined();
    const url = new URL(thumbnail ?? "");
    const fileKey = decodeURIComponent(url.pathname.replace(/^\/files\//, ""));
    expect(fileKey).toBe(`job/${jobId}/${attemptId}/thumb-0001.jpg`);
    expect(
      await checkFileSignature(
        env.FILE_URL_SECRET,
        fileKey,
        url.searchParams.get("expires") ?? "",
        url.searchParams.get("signature") ?? "",
      ),
    ).toBe("ok");
    const image = await exports.default.fetch(url.toString());
    expect(image.status).toBe(200);
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(thumbBytes(1));

    const overview = await visitor.get("/dashboard");
    expect(overview.text).toContain(`href="/dashboard/jobs/${jobId}"`);

    // Each frame shows its thumbnail and opens its original.
    const detail = await visitor.get(`/dashboard/jobs/${jobId}`);
    expect(detail.status).toBe(200);
    const tiles = [
      ...detail.text.matchAll(
        /<a href="([^"]+)" class="frame-open"[^>]*><img src="([^"]+)" alt="Frame (\d+)/g,
      ),
    ];
    expect(tiles.map((m) => m[3])).toEqual(["1", "2", "3"]);
    for (const [, href, src, index] of tiles) {
      const shown = await exports.default.fetch(src.replaceAll("&amp;", "&"));
      expect(new Uint8Array(await shown.arrayBuffer())).toEqual(thumbBytes(Number(index)));
      const opened = await exports.default.fetch(href.replaceAll("&amp;", "&"));
      expect(new Uint8Array(await opened.arrayBuffer())).toEqual(
        frameBytes(jobId, attemptId, Number(index)),
      );
    }
  });

  it("a job made before thumbnails shows none, never its full-size frames, and links to them", async () => {
    const { visitor } = await signedIn();
    const { key } = await createKeyOnDashboard(visitor, "old");
    const { jobId } = await finishedJob(key, false);
    const list = await visitor.get("/dashboard/jobs");
    expect(list.text).toContain(`href="/dashboard/jobs/${jobId}"`);
    expect(list.text).not.toContain('<img class="thumb"');
    expect(list.text).toContain("thumb thumb-empty");
    const detail = await visitor.get(`/dashboard/jobs/${jobId}`);
    expect(detail.text).not.toMatch(/<img src="[^"]*\/files\/job\//);
    const links = [...detail.text.matchAll(/<a href="([^"]+)" class="frame-open"/g)];
    expect(links).toHaveLength(3);
    expect(textOf(detail.text)).toContain("no preview");
  });

  /** The visitor's GET answered whole, as bytes (Visitor reads text). */
  async function getBytes(visitor: Visitor, path: string) {
    const cookie = [...visitor.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    return exports.default.fetch(`${ORIGIN}${path}`, { headers: { cookie } });
  }

  it("Download all streams the frames as a ZIP, byte for byte; only the account's completed jobs", async () => {
    const { visitor } = await signedIn();
    const { key } = await createKeyOnDashboard(visitor, "zip");
    const { jobId, attemptId } = await finishedJob(key, true);
    const res = await getBytes(visitor, `/dashboard/jobs/${jobId}/frames.zip`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(res.headers.get("content-disposition")).toBe(
      `attachment; filename="stills-${jobId}-frames.zip"`,
    );
    const zip = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(Object.keys(zip)).toEqual(["frame-0001.jpg", "frame-0002.jpg", "frame-0003.jpg"]);
    for (const index of [1, 2, 3]) {
      expect(zip[`frame-000${index}.jpg`]).toEqual(frameBytes(jobId, attemptId, index));
    }
    // Another account's job, a running job, a made-up id: a page that says so, no archive.
    const other = await signedIn();
    const refused = await getBytes(other.visitor, `/dashboard/jobs/${jobId}/frames.zip`);
    expect(refused.status).toBe(404);
    expect(refused.headers.get("content-type")).toMatch(/^text\/html/);
    const running = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/later.mp4", count: 1 },
      headers: { authorization: `Bearer ${key}` },
    });
    const early = await getBytes(visitor, `/dashboard/jobs/${running.body.id}/frames.zip`);
    expect(early.status).toBe(400);
    expect(textOf(await early.text())).toContain("Only a completed job has frames to download");
    expect((await getBytes(visitor, "/dashboard/jobs/not-a-job/frames.zip")).status).toBe(404);
    // A file gone from R2 is found before the answer starts.
    await env.FILES.delete(`job/${jobId}/${attemptId}/frame-0002.jpg`);
    const broken = await getBytes(visitor, `/dashboard/jobs/${jobId}/frames.zip`);
    expect(broken.status).toBe(400);
    expect(textOf(await broken.text())).toContain("Some of this job&#39;s files are gone");
  });

  it("the live JSON says each of the account's jobs' status and progress, and leaves out others'", async () => {
    const { visitor } = await signedIn();
    const { key } = await createKeyOnDashboard(visitor, "live");
    const { jobId } = await finishedJob(key, false);
    setExtractor(() => Response.json({ accepted: true }, { status: 202 }));
    const waiting = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/waiting.mp4", count: 2 },
      headers: { authorization: `Bearer ${key}` },
    });
    const stranger = await signedIn();
    const { key: strangerKey } = await createKeyOnDashboard(stranger.visitor, "s");
    const theirs = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/theirs.mp4", count: 1 },
      headers: { authorization: `Bearer ${strangerKey}` },
    });
    const ids = [jobId, waiting.body.id, theirs.body.id, "nope"].join(",");
    const res = await visitor.get(`/dashboard/jobs/live?ids=${ids}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const answer = JSON.parse(res.text);
    const read = await api("GET", `/v1/jobs/${waiting.body.id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(answer.jobs.map((j: { id: string }) => j.id)).toEqual([jobId, waiting.body.id]);
    expect(answer.jobs[0]).toMatchObject({ status: "completed", label: "Completed" });
    expect(answer.jobs[1].status).toBe(read.body.status);
    expect(["queued", "processing"]).toContain(answer.jobs[1].status);
    expect(answer.jobs[1].progress).toEqual(read.body.progress ?? null);
    expect(answer.running).toBe(true);
    const finished = JSON.parse((await visitor.get(`/dashboard/jobs/live?ids=${jobId}`)).text);
    expect(finished.running).toBe(false);
    // Without a session: sign-in, not JSON.
    const anonymous = await new Visitor().get(`/dashboard/jobs/live?ids=${jobId}`);
    expect(anonymous.status).toBe(303);
  });

  it("another account's job, or a made-up id, is a 404 page", async () => {
    const owner = await signedIn();
    const { key } = await createKeyOnDashboard(owner.visitor, "k");
    const created = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/other.mp4", count: 1 },
      headers: { authorization: `Bearer ${key}` },
    });
    const { visitor } = await signedIn();
    for (const id of [created.body.id, "not-a-uuid"]) {
      const res = await visitor.get(`/dashboard/jobs/${id}`);
      expect(res.status).toBe(404);
      expect(textOf(res.text)).toContain("no job with that id");
    }
    expect(textOf((await visitor.get("/dashboard/jobs")).text)).toContain("No jobs yet");
  });
});

describe("credits, plan and ledger", () => {
  it("shows plan and pack credits apart, and the ledger newest first", async () => {
    const email = `${crypto.randomUUID()}@example.com`;
    // An account the admin command made, with a pack, signs in as the same account.
    const issued = await issueKeyStatements({ email, packCredits: 500 });
    await env.DB.batch(issued.statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
    const { visitor } = await signedIn(email);

    const overview = textOf((await visitor.get("/dashboard")).text);
    expect(overview).toContain("Available now 560");
    expect(overview).toContain("Plan credits 60 of 60 a month");
    expect(overview).toContain("Pack credits 500 never expire");
    expect(overview).toMatch(/Plan free/);
    expect(overview).toContain("None (plans are monthly");

    const billing = await visitor.get("/dashboard/billing");
    expect(billing.status).toBe(200);
    expect(textOf(billing.text)).toContain("Pack credits: 500.");
    // The ledger itself is on the Usage page, one row per job (decision 0251).
    const usage = await visitor.get("/dashboard/usage");
    expect(usage.status).toBe(200);
    const text = textOf(usage.text);
    const pack = text.indexOf("Credit pack 500 pack credits");
    const grant = text.indexOf("Plan credits free plan credits for the first period");
    expect(pack).toBeGreaterThan(-1);
    expect(grant).toBeGreaterThan(pack);
    expect(text).toContain("+500");
    expect(text).toContain("+60");
  });

  it("without Stripe the plans have no buy buttons, and a forged checkout says payments are off", async () => {
    const { visitor } = await signedIn();
    const billing = await visitor.get("/dashboard/billing");
    expect(textOf(billing.text)).toContain("Buying is switched off");
    expect(billing.text).not.toContain('action="/dashboard/checkout"');
    for (const plan of ["starter", "pro", "scale"]) expect(textOf(billing.text)).toContain(plan);

    const checkout = await visitor.post("/dashboard/checkout", { purchase: "pack" });
    expect(checkout.status).toBe(503);
    expect(textOf(checkout.text)).toContain("Payments are not available right now");
    const bad = await visitor.post("/dashboard/checkout", { purchase: "everything" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).data.name).toBe("InvalidRequest");
  });

  it("with Stripe configured, offers the other plans and the pack, and a purchase goes to Checkout", async () => {
    const { visitor, accountId } = await signedIn();
    visitor.workerEnv = stripeEnv();
    const calls = standInStripeApi();
    const billing = await visitor.get("/dashboard/billing");
    expect(billing.status).toBe(200);
    expect(textOf(billing.text)).not.toContain("Buying is switched off");
    const offered = [...billing.text.matchAll(/name="purchase" value="(\w+)"/g)].map((m) => m[1]);
    expect(offered.sort()).toEqual(["pack", "pro", "scale", "starter"]);
    expect(calls).toEqual([]);

    const bought = await visitor.post("/dashboard/checkout", { purchase: "pack" });
    expect(bought.status).toBe(303);
    expect(bought.headers.get("location")).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\//);
    const session = calls.find((call) => call.path === "/v1/checkout/sessions");
    expect(session?.params).toMatchObject({
      mode: "payment",
      client_reference_id: accountId,
      "line_items[0][price]": PRICES.pack,
    });
    expect(session?.params.success_url).toBe(`${ORIGIN}/dashboard?checkout=success`);

    // A customer now: the portal is offered, and opens.
    const after = await visitor.get("/dashboard/billing");
    expect(after.text).toContain('action="/dashboard/billing/portal"');
    const portal = await visitor.post("/dashboard/billing/portal", {});
    expect(portal.status).toBe(303);
    expect(portal.headers.get("location")).toMatch(/^https:\/\/billing\.stripe\.test\//);
  });

  it("says so after a Checkout, whichever way it ended", async () => {
    const { visitor } = await signedIn();
    expect(textOf((await visitor.get("/dashboard?checkout=success")).text)).toContain(
      "as soon as Stripe confirms",
    );
    expect(textOf((await visitor.get("/dashboard?checkout=cancelled")).text)).toContain(
      "nothing was charged",
    );
  });
});

describe("webhook signing secret", () => {
  it("is hidden until revealed, and rotation replaces it", async () => {
    const { visitor, accountId } = await signedIn();
    const secretOf = async () =>
      (
        await env.DB.prepare("SELECT webhook_secret FROM accounts WHERE id = ?")
          .bind(accountId)
          .first<{ webhook_secret: string }>()
      )?.webhook_secret ?? "";
    const secret = await secretOf();
    expect(secret).toMatch(/^whsec_/);
    const page = await visitor.get("/dashboard/webhooks");
    expect(page.text).not.toContain(secret);
    const revealed = await visitor.post("/dashboard/webhooks/reveal", {});
    expect(revealed.status).toBe(200);
    expect(revealed.text).toContain(secret);

    const rotated = await visitor.post("/dashboard/webhooks/rotate", {});
    const fresh = await secretOf();
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(fresh).not.toBe(secret);
    expect(rotated.text).toContain(fresh);
    expect(rotated.text).not.toContain(secret);
  });
});
