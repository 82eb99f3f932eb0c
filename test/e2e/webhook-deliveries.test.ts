// The webhook delivery log on the real stack (decision 0210): a real job's delivery to a local
// receiver shows in GET /v1/webhook-deliveries with the receiver's own status and the body it
// got; the dashboard's Resend and test event reach the receiver signed with the account's
// secret, and are logged in their turn.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestVideo } from "../support/videos.ts";
import {
  call,
  type Harness,
  type ReceivedHook,
  startHarness,
  startReceiver,
  verifyStandardWebhook,
} from "./support/harness.ts";

/** An unusual 2xx, so the log's status can only be the receiver's. */
const RECEIVER_STATUS = 203;

let h: Harness;
let videoUrl: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  h = await startHarness();
  const file = await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 4 });
  videoUrl = h.serveVideo("/media/hooks.mp4", file);
  receiver = await startReceiver(RECEIVER_STATUS);
});

afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const hookNumber = (n: number) =>
  until(`hook ${n}`, async () => receiver.received[n - 1] as ReceivedHook | undefined);

/** A signed-in dashboard session over plain HTTP, posting forms as our own pages do. */
async function dashboardSession(email: string) {
  const base = h.stack.baseUrl;
  const cookies = new Map<string, string>();
  const post = async (path: string, form: Record<string, string>) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: base,
        "sec-fetch-site": "same-origin",
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
      body: new URLSearchParams(form).toString(),
      redirect: "manual",
    });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";")[0];
      cookies.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    return { status: response.status, location: response.headers.get("location") ?? "" };
  };
  expect((await post("/sign-in", { email })).status).toBe(303);
  const [row] = await h.query(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC LIMIT 1",
    [email],
  );
  expect((await post("/sign-in/code", { email, code: String(row?.code) })).status).toBe(303);
  return { post };
}

describe("webhook deliveries against a local receiver", () => {
  it("logs a job's delivery with the receiver's status; resend and test event arrive signed", async () => {
    const account = await h.newKey("starter");
    const secret = await h.webhookSecret(account.email);
    const created = await call(h.stack, "POST", "/jobs", {
      body: { url: videoUrl, timestamps: [1], webhook_url: receiver.url },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const jobId = created.body.id as string;
    const first = await hookNumber(1);
    expect(verifyStandardWebhook(secret, first)).toBe(true);

    // The log, through the API: the delivery, its attempt with the receiver's status, the body.
    const delivery = await until("the logged delivery", async () => {
      const list = await call(h.stack, "GET", "/webhook-deliveries", { headers: account.auth });
      expect(list.status).toBe(200);
      const found = list.body.data.find((d: { job_id: string }) => d.job_id === jobId);
      return found?.attempts_count >= 1 ? found : undefined;
    });
    expect(delivery).toMatchObject({
      id: first.headers["webhook-id"],
      type: "job.completed",
      url: receiver.url,
      state: "delivered",
      last_status_code: RECEIVER_STATUS,
      attempts_count: 1,
    });
    expect(delivery.attempts[0]).toMatchObject({
      status_code: RECEIVER_STATUS,
      error: null,
      trigger: "automatic",
    });
    expect(delivery.body).toBe(first.body);

    // Resend from the dashboard: the same event again, signed, with the same webhook-id.
    const session = await dashboardSession(account.email);
    const resend = await session.post(
      `/dashboard/webhooks/deliveries/${encodeURIComponent(delivery.id)}/resend`,
      {},
    );
    expect(resend.status).toBe(303);
    const second = await hookNumber(2);
    expect(second.headers["webhook-id"]).toBe(delivery.id);
    expect(verifyStandardWebhook(secret, second)).toBe(true);
    expect(JSON.parse(second.body)).toMatchObject({ type: "job.completed", data: { id: jobId } });

    // A test event to the same receiver.
    const test = await session.post("/dashboard/webhooks/test", { url: receiver.url });
    expect(test.status).toBe(303);
    expect(test.location).toMatch(/^\/dashboard\/webhooks\/deliveries\/msg_test_/);
    const third = await hookNumber(3);
    expect(verifyStandardWebhook(secret, third)).toBe(true);
    expect(JSON.parse(third.body)).toMatchObject({
      type: "webhook.test",
      data: { object: "webhook_test", id: third.headers["webhook-id"] },
    });

    // Both are in the log, each attempt with the receiver's status.
    const list = await until("both attempts logged", async () => {
      const page = await call(h.stack, "GET", "/webhook-deliveries", { headers: account.auth });
      const [newest, older] = page.body.data;
      return newest?.attempts_count === 1 && older?.attempts_count === 2 ? page.body : undefined;
    });
    expect(list.total).toBe(2);
    expect(list.data[0]).toMatchObject({ type: "webhook.test", last_status_code: RECEIVER_STATUS });
    expect(list.data[1].attempts.map((a: { trigger: string }) => a.trigger)).toEqual([
      "automatic",
      "resend",
    ]);
  });
});
