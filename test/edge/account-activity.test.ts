// The account's activity log: sign-ins, sign-outs, keys and the webhook secret, each with its
// network and client, readable by the owner alone on /dashboard/activity, and bounded.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recordAccountEvent } from "../../edge/auth/account-events.ts";
import { ACCOUNT_EVENTS_KEPT } from "../../schema/account-events.ts";
import { accountIdFor } from "../../schema/accounts.ts";
import { Visitor } from "./support/visitor.ts";

const USER_AGENT = "ActivityTest/1.0 (security suite)";

async function signIn(visitor: Visitor, email: string) {
  expect((await visitor.post("/sign-in", { email })).status).toBe(303);
  const row = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC",
  )
    .bind(email)
    .first<{ code: string }>();
  const entered = await visitor.post(
    "/sign-in/code",
    { email, code: row?.code ?? "" },
    { "user-agent": USER_AGENT },
  );
  expect(entered.status).toBe(303);
}

async function events(accountId: string) {
  const { results } = await env.DB.prepare(
    "SELECT kind, network, user_agent, detail FROM account_events WHERE account_id = ? ORDER BY created_at, rowid",
  )
    .bind(accountId)
    .all<{ kind: string; network: string; user_agent: string | null; detail: string | null }>();
  return results;
}

describe("the account's activity", () => {
  it("records sign-in, keys, the webhook secret and sign-out, and shows them to the owner newest first", async () => {
    const visitor = new Visitor();
    const email = `${crypto.randomUUID()}@example.com`;
    const accountId = await accountIdFor(email);
    await signIn(visitor, email);

    const created = await visitor.post("/dashboard/keys", { name: "laptop-activity" });
    expect([200, 303]).toContain(created.status);
    const key = await env.DB.prepare("SELECT id, hint FROM api_keys WHERE account_id = ?")
      .bind(accountId)
      .first<{ id: string; hint: string }>();
    expect((await visitor.post(`/dashboard/keys/${key?.id}/revoke`, {})).status).toBe(303);
    expect((await visitor.post("/dashboard/webhooks/reveal", {})).status).toBe(200);
    expect((await visitor.post("/dashboard/webhooks/rotate", {})).status).toBe(200);

    const logged = await events(accountId);
    expect(logged.map((e) => e.kind)).toEqual([
      "account_created",
      "sign_in",
      "key_created",
      "key_revoked",
      "webhook_secret_revealed",
      "webhook_secret_rotated",
    ]);
    expect(new Set(logged.map((e) => e.network))).toEqual(new Set([visitor.ip]));
    expect(logged[1].user_agent).toBe(USER_AGENT);
    expect(logged[2].detail).toBe(`laptop-activity (${key?.hint})`);
    expect(logged[3].detail).toBe(`laptop-activity (${key?.hint})`);

    const page = await visitor.get("/dashboard/activity");
    expect(page.status).toBe(200);
    const table = page.text.slice(page.text.indexOf("<table"));
    const order = [
      "Webhook signing secret rotated",
      "Webhook signing secret shown",
      "API key revoked",
      "API key created",
      "Signed in",
      "Account created",
    ].map((label) => table.indexOf(label));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(page.text).toContain(visitor.ip);
    expect(page.text).toContain("ActivityTest/1.0");
    expect(page.text).toContain("laptop-activity");

    expect((await visitor.post("/sign-out", {})).status).toBe(303);
    expect((await events(accountId)).at(-1)?.kind).toBe("sign_out");
  });

  it("is the owner's alone: another account sees only its own, and no session sees none", async () => {
    const owner = new Visitor();
    const ownerEmail = `${crypto.randomUUID()}@example.com`;
    await signIn(owner, ownerEmail);
    await owner.post("/dashboard/keys", { name: "owners-secret-key-name" });

    const other = new Visitor();
    await signIn(other, `${crypto.randomUUID()}@example.com`);
    const page = await other.get("/dashboard/activity");
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("owners-secret-key-name");
    expect(page.text).not.toContain(owner.ip);

    const nobody = await new Visitor().get("/dashboard/activity");
    expect(nobody.status).toBe(303);
    expect(nobody.headers.get("location")).toBe("/sign-in?next=%2Fdashboard%2Factivity");
  });

  it(`keeps the newest ${ACCOUNT_EVENTS_KEPT} events of an account`, async () => {
    const visitor = new Visitor();
    const email = `${crypto.randomUUID()}@example.com`;
    const accountId = await accountIdFor(email);
    await signIn(visitor, email);
    const origin = { network: "198.51.100.9", userAgent: null };
    for (let i = 0; i < ACCOUNT_EVENTS_KEPT + 5; i++) {
      await recordAccountEvent(env, accountId, "webhook_secret_revealed", origin, `n${i}`);
    }
    const kept = await events(accountId);
    expect(kept).toHaveLength(ACCOUNT_EVENTS_KEPT);
    expect(kept[0].detail).toBe("n5");
    expect(kept.at(-1)?.detail).toBe(`n${ACCOUNT_EVENTS_KEPT + 4}`);
  });
});
