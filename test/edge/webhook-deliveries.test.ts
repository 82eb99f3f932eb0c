// The webhook delivery log (decisions 0210, 0211): a row per event with each attempt's status,
// its bounds, resend and test events signed like a job's, both signatures for a day after a
// rotation (simulated clock), and GET /v1/webhook-deliveries with its paging and auth.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../edge/index.ts";
import { pruneOldDeliveries, recordAttempt } from "../../edge/storage/webhooks.ts";
import { accountIdFor } from "../../schema/accounts.ts";
import type { WebhookMessage } from "../../schema/messages.ts";
import {
  WEBHOOK_ATTEMPTS_KEPT,
  WEBHOOK_DELIVERIES_KEPT,
  type WebhookAttempt,
} from "../../schema/webhook-deliveries.ts";
import { api, createAccount } from "./support/api.ts";
import { setOutbound } from "./support/fake-extractor.ts";
import { Visitor } from "./support/visitor.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";
const HOOK = "https://hooks.example.com/stills";

interface Received {
  url: string;
  headers: Headers;
  body: string;
}

/** Standard Webhooks verification from the scheme (WebCrypto), not from the edge's signer. */
async function verifies(secret: string, hook: Received): Promise<boolean> {
  const raw = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const signed = `${hook.headers.get("webhook-id")}.${hook.headers.get("webhook-timestamp")}.${hook.body}`;
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(signed)),
  );
  const expected = `v1,${btoa(String.fromCharCode(...mac))}`;
  return (hook.headers.get("webhook-signature") ?? "").split(" ").includes(expected);
}

function receiver(statuses: (number | Error)[] = [200]) {
  const received: Received[] = [];
  setOutbound(async (request) => {
    received.push({ url: request.url, headers: request.headers, body: await request.text() });
    const next = statuses.length > 1 ? statuses.shift() : statuses[0];
    if (next instanceof Error) throw next;
    return new Response("ok", { status: next });
  });
  return received;
}

/** Runs the webhook consumer on one message; its ack and retry are spies. */
async function consume(body: WebhookMessage, attempts = 1) {
  const ack = vi.fn();
  const retry = vi.fn();
  const batch = {
    queue: "stills-webhooks",
    messages: [{ id: crypto.randomUUID(), timestamp: new Date(), attempts, body, ack, retry }],
    ackAll: vi.fn(),
    retryAll: vi.fn(),
  } as unknown as MessageBatch<WebhookMessage>;
  await worker.queue(batch, env, createExecutionContext());
  return { ack, retry };
}

async function jobWithHook(auth: Record<string, string>) {
  const created = await api("POST", "/v1/jobs", {
    body: { url: VIDEO, count: 1, webhook_url: HOOK },
    headers: auth,
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function secretsOf(accountId: string) {
  return (await env.DB.prepare(
    "SELECT webhook_secret AS secret, previous_webhook_secret AS previous, previous_webhook_secret_until AS until FROM accounts WHERE id = ?",
  )
    .bind(accountId)
    .first<{ secret: string; previous: string | null; until: string | null }>())!;
}

async function signedIn() {
  const email = `${crypto.randomUUID()}@example.com`;
  const visitor = new Visitor();
  expect((await visitor.post("/sign-in", { email })).status).toBe(303);
  const mail = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
  )
    .bind(email)
    .first<{ code: string }>();
  expect((await visitor.post("/sign-in/code", { email, code: mail?.code ?? "" })).status).toBe(303);
  return { visitor, accountId: await accountIdFor(email) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the delivery log", () => {
  it("writes each attempt with its status, latency and time, and the body sent", async () => {
    const account = await createAccount();
    const jobId = await jobWithHook(account.auth);
    const received = receiver([503, new TypeError("connection refused"), 202]);
    const event: WebhookMessage = {
      event_id: `msg_${jobId}_completed`,
      type: "job.completed",
      job_id: jobId,
    };
    const first = await consume(event, 1);
    expect(first.retry).toHaveBeenCalledWith({ delaySeconds: 2 });
    const second = await consume(event, 2);
    expect(second.retry).toHaveBeenCalledWith({ delaySeconds: 4 });
    const third = await consume(event, 3);
    expect(third.ack).toHaveBeenCalled();
    expect(received).toHaveLength(3);

    const listed = await api("GET", "/v1/webhook-deliveries", { headers: account.auth });
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(1);
    const [delivery] = listed.body.data;
    expect(delivery).toMatchObject({
      id: event.event_id,
      object: "webhook_delivery",
      type: "job.completed",
      job_id: jobId,
      url: HOOK,
      state: "delivered",
      last_status_code: 202,
      attempts_count: 3,
      body_truncated: false,
    });
    const attempts = delivery.attempts as WebhookAttempt[];
    expect(attempts.map((a) => a.status_code)).toEqual([503, null, 202]);
    expect(attempts.map((a) => a.trigger)).toEqual(["automatic", "automatic", "automatic"]);
    expect(attempts[1].error).toContain("connection refused");
    expect(attempts[0].error).toBeNull();
    for (const attempt of attempts) {
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(0);
      expect(Date.now() - Date.parse(attempt.attempted_at)).toBeLessThan(60_000);
    }
    // The body kept is the one the receiver got last, byte for byte.
    expect(delivery.body).toBe(received[2].body);
    expect(JSON.parse(delivery.body)).toMatchObject({ type: "job.completed", data: { id: jobId } });
  });

  it("logs a refused address as an attempt with the reason, and does not retry it", async () => {
    const account = await createAccount();
    const jobId = await jobWithHook(account.auth);
    await env.DB.prepare(
      "UPDATE jobs SET webhook_url = 'http://hooks.example.com/plain' WHERE id = ?",
    )
      .bind(jobId)
      .run();
    const received = receiver();
    const { ack, retry } = await consume({
      event_id: `msg_${jobId}_failed`,
      type: "job.failed",
      job_id: jobId,
    });
    expect(received).toHaveLength(0);
    expect(ack).toHaveBeenCalled();
    expect(retry).not.toHaveBeenCalled();
    const listed = await api("GET", "/v1/webhook-deliveries", { headers: account.auth });
    expect(listed.body.data[0]).toMatchObject({
      state: "failing",
      last_status_code: null,
      body: null,
    });
    expect(listed.body.data[0].attempts[0].error).toMatch(/^refused: /);
  });

  it("keeps an account's newest deliveries, the last attempts of each, and 30 days", async () => {
    const account = await createAccount();
    const old = Date.now() - 31 * 86_400_000;
    const rows = Array.from({ length: WEBHOOK_DELIVERIES_KEPT }, (_, i) =>
      env.DB.prepare(
        "INSERT INTO webhook_deliveries (id, account_id, type, url, created_at) VALUES (?, ?, 'job.completed', ?, ?)",
      ).bind(
        `msg_fill_${account.accountId}_${i}`,
        account.accountId,
        HOOK,
        new Date(old + i * 1000).toISOString(),
      ),
    );
    await env.DB.batch(rows);
    const attempt = (n: number): WebhookAttempt => ({
      attempted_at: new Date().toISOString(),
      status_code: 500 + (n % 5),
      error: null,
      latency_ms: n,
      trigger: "automatic",
    });
    const target = {
      id: `msg_new_${account.accountId}`,
      accountId: account.accountId,
      type: "job.completed" as const,
      jobId: null,
      url: HOOK,
    };
    for (let n = 1; n <= WEBHOOK_ATTEMPTS_KEPT + 5; n++)
      await recordAttempt(env.DB, target, "{}", attempt(n));
    const count = async () =>
      (await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE account_id = ?")
        .bind(account.accountId)
        .first<{ n: number }>())!.n;
    // The row cap: the new row came in, the oldest went.
    expect(await count()).toBe(WEBHOOK_DELIVERIES_KEPT);
    const oldest = await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE id = ?")
      .bind(`msg_fill_${account.accountId}_0`)
      .first();
    expect(oldest).toBeNull();
    const listed = await api("GET", "/v1/webhook-deliveries?limit=1", { headers: account.auth });
    expect(listed.body.data[0].attempts_count).toBe(WEBHOOK_ATTEMPTS_KEPT + 5);
    expect(listed.body.data[0].attempts.map((a: WebhookAttempt) => a.latency_ms)).toEqual(
      Array.from({ length: WEBHOOK_ATTEMPTS_KEPT }, (_, i) => i + 6),
    );
    // The cron's step (edge/maintenance.ts) drops what is past 30 days, and keeps the rest.
    expect(await pruneOldDeliveries(env.DB, Date.now())).toBeGreaterThanOrEqual(
      WEBHOOK_DELIVERIES_KEPT - 1,
    );
    expect(await count()).toBe(1);
  });
});

describe("resend and test events", () => {
  it("a test event from the dashboard is signed, arrives, and shows its attempt", async () => {
    const { visitor, accountId } = await signedIn();
    const received = receiver([200]);
    const sent = await visitor.post("/dashboard/webhooks/test", {
      url: "https://hooks.example.com/test",
    });
    expect(sent.status).toBe(303);
    const location = sent.headers.get("location") ?? "";
    expect(location).toMatch(
      /^\/dashboard\/webhooks\/deliveries\/msg_test_[0-9a-f-]{36}\?sent=test$/,
    );
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 10_000 });
    const hook = received[0];
    expect(hook.url).toBe("https://hooks.example.com/test");
    expect(JSON.parse(hook.body)).toMatchObject({
      type: "webhook.test",
      data: { object: "webhook_test" },
    });
    const { secret } = await secretsOf(accountId);
    expect(await verifies(secret, hook)).toBe(true);
    expect(await verifies(`whsec_${btoa("another secret of 24 b!")}`, hook)).toBe(false);
    await vi.waitFor(
      async () => {
        const page = await visitor.get(location);
        expect(page.status).toBe(200);
        expect(page.text).toContain("A test event is queued");
        expect(page.text).toMatch(/class="status status-completed">200</);
        expect(page.text).toContain("webhook.test");
      },
      { timeout: 5_000 },
    );
    // The webhooks page lists it.
    const list = await visitor.get("/dashboard/webhooks");
    expect(list.text).toContain(location.replace(/\?.*$/, ""));

    // A resend: one more attempt of the same event, signed again, with the same webhook-id.
    const resent = await visitor.post(`${location.replace(/\?.*$/, "")}/resend`, {});
    expect(resent.status).toBe(303);
    await vi.waitFor(() => expect(received).toHaveLength(2), { timeout: 10_000 });
    expect(received[1].headers.get("webhook-id")).toBe(hook.headers.get("webhook-id"));
    expect(await verifies(secret, received[1])).toBe(true);
  });

  it("resends a job's delivery once, signed, without a new retry series", async () => {
    const account = await createAccount();
    const jobId = await jobWithHook(account.auth);
    const received = receiver([500]);
    const event: WebhookMessage = {
      event_id: `msg_${jobId}_failed`,
      type: "job.failed",
      job_id: jobId,
    };
    await consume(event);
    const { ack, retry } = await consume({ ...event, resend: true });
    expect(ack).toHaveBeenCalled();
    expect(retry).not.toHaveBeenCalled();
    expect(received).toHaveLength(2);
    const { secret } = await secretsOf(account.accountId);
    expect(await verifies(secret, received[1])).toBe(true);
    expect(JSON.parse(received[1].body).data.id).toBe(jobId);
    const listed = await api("GET", "/v1/webhook-deliveries", { headers: account.auth });
    expect(listed.body.data[0].attempts.map((a: WebhookAttempt) => a.trigger)).toEqual([
      "automatic",
      "resend",
    ]);
  });

  it("refuses a test event to an address a webhook may not use, and another account's delivery", async () => {
    const { visitor } = await signedIn();
    const refused = await visitor.post("/dashboard/webhooks/test", {
      url: "http://hooks.example.com/plain",
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("public https:// address");
    expect(refused.text).toContain('aria-invalid="true"');

    const other = await createAccount();
    const jobId = await jobWithHook(other.auth);
    receiver([200]);
    await consume({ event_id: `msg_${jobId}_completed`, type: "job.completed", job_id: jobId });
    const path = `/dashboard/webhooks/deliveries/msg_${jobId}_completed`;
    expect((await visitor.get(path)).status).toBe(404);
    expect((await visitor.post(`${path}/resend`, {})).status).toBe(404);
    // A forged cross-site post never reaches the handler.
    const forged = await visitor.post(
      `${path}/resend`,
      {},
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(forged.status).toBe(400);
    expect(forged.text).toContain("Cross-site form submission refused");
  });
});

describe("rotation", () => {
  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    const { visitor, accountId } = await signedIn();
    const before = await secretsOf(accountId);
    const rotatedAt = Date.now();
    const page = await visitor.post("/dashboard/webhooks/rotate", {});
    expect(page.status).toBe(200);
    const after = await secretsOf(accountId);
    expect(after.secret).not.toBe(before.secret);
    expect(after.previous).toBe(before.secret);
    const until = Date.parse(after.until ?? "");
    expect(until - rotatedAt).toBeGreaterThanOrEqual(24 * 3_600_000 - 1000);
    expect(until - rotatedAt).toBeLessThanOrEqual(24 * 3_600_000 + 5000);
    // The page says until when (UTC before the page's script turns it local).
    expect(page.text).toContain(`datetime="${after.until}"`);
    expect(page.text).toContain("Deliveries carry the old secret&#39;s signature too until");

    const received = receiver([200]);
    const send = () =>
      consume({
        event_id: `msg_test_${crypto.randomUUID()}`,
        type: "webhook.test",
        account_id: accountId,
        url: HOOK,
      });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(until - 60_000);
    await send();
    const within = received[0];
    expect(within.headers.get("webhook-signature")?.split(" ")).toHaveLength(2);
    expect(await verifies(after.secret, within)).toBe(true);
    expect(await verifies(before.secret, within)).toBe(true);

    vi.setSystemTime(until + 1);
    await send();
    const later = received[1];
    expect(later.headers.get("webhook-signature")?.split(" ")).toHaveLength(1);
    expect(await verifies(after.secret, later)).toBe(true);
    expect(await verifies(before.secret, later)).toBe(false);
    vi.useRealTimers();
    // The webhooks page says the old one still signs while it does.
    expect((await visitor.get("/dashboard/webhooks")).text).toContain("previous secret until");
  });
});

describe("GET /v1/webhook-deliveries", () => {
  it("pages newest first, and shows an account only its own", async () => {
    const account = await createAccount();
    const other = await createAccount();
    for (let i = 0; i < 3; i++) {
      await env.DB.prepare(
        "INSERT INTO webhook_deliveries (id, account_id, type, url, created_at) VALUES (?, ?, 'webhook.test', ?, ?)",
      )
        .bind(
          `msg_page_${account.accountId}_${i}`,
          account.accountId,
          HOOK,
          new Date(Date.now() - (3 - i) * 1000).toISOString(),
        )
        .run();
    }
    const first = await api("GET", "/v1/webhook-deliveries?limit=2", { headers: account.auth });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 3, limit: 2, skip: 0 });
    expect(first.body.data.map((d: { id: string }) => d.id)).toEqual([
      `msg_page_${account.accountId}_2`,
      `msg_page_${account.accountId}_1`,
    ]);
    expect(first.body.data[0]).toMatchObject({
      state: "pending",
      attempts: [],
      attempts_count: 0,
      body: null,
    });
    const second = await api("GET", "/v1/webhook-deliveries?limit=2&skip=2", {
      headers: account.auth,
    });
    expect(second.body.data.map((d: { id: string }) => d.id)).toEqual([
      `msg_page_${account.accountId}_0`,
    ]);
    const theirs = await api("GET", "/v1/webhook-deliveries", { headers: other.auth });
    expect(theirs.body).toMatchObject({ total: 0, data: [] });
  });

  it("needs a key, and says what is wrong with a bad page", async () => {
    const none = await api("GET", "/v1/webhook-deliveries");
    expect(none.status).toBe(401);
    expect(none.body.data.name).toBe("AuthenticationRequired");
    const account = await createAccount();
    const bad = await api("GET", "/v1/webhook-deliveries?limit=0", { headers: account.auth });
    expect(bad.status).toBe(400);
    expect(bad.body.data.name).toBe("InvalidRequest");
    expect(bad.body.message).toContain("limit");
  });
});
