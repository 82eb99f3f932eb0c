import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { PLANS } from "../../schema/plans.ts";
import { api, createAccount } from "./support/api.ts";

it("reports plan, balance, limits and the ledger of the caller", async () => {
  const account = await createAccount({ plan: "starter", packCredits: 500 });
  await api("POST", "/v1/jobs", {
    body: { url: "https://cdn.example.com/a.mp4", timestamps: [1, 2] },
    headers: account.auth,
  });
  const res = await api("GET", "/v1/usage", { headers: account.auth });
  expect(res.status).toBe(200);
  const { max_resolution: _, ...limits } = PLANS.starter.limits;
  expect(res.body).toMatchObject({
    object: "usage",
    plan: "starter",
    credits: { plan: 1500, pack: 500, available: 1999, monthly_allowance: 1500 },
    subscription: null,
    limits,
    this_period: { jobs_created: 1, credits_reserved: 1 },
  });
  expect(Date.parse(res.body.period.end) - Date.parse(res.body.period.start)).toBeGreaterThan(
    27 * 86_400_000,
  );
  const kinds = res.body.recent_ledger.map((e: { kind: string }) => e.kind).sort();
  expect(kinds).toEqual(["grant", "pack", "reserve"]);
});

it("shows another account nothing of this one", async () => {
  const a = await createAccount({ packCredits: 500 });
  const b = await createAccount();
  const res = await api("GET", "/v1/usage", { headers: b.auth });
  expect(res.body.credits.pack).toBe(0);
  expect(JSON.stringify(res.body)).not.toContain(a.accountId);
  const row = await env.DB.prepare("SELECT pack_credits FROM accounts WHERE id = ?")
    .bind(a.accountId)
    .first();
  expect(row).toEqual({ pack_credits: 500 });
});

it("counts a job that completed and then expired among the period's completed jobs", async () => {
  const account = await createAccount({ plan: "starter" });
  // Settled as settlement and the cron leave them, one after another (each frees its active
  // slot): completed, completed then expired, failed; the last still queued.
  for (const status of ["completed", "expired", "failed", null]) {
    const created = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/a.mp4", timestamps: [1] },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    if (status) {
      await env.DB.prepare("UPDATE jobs SET status = ? WHERE id = ?")
        .bind(status, created.body.id)
        .run();
    }
  }
  const res = await api("GET", "/v1/usage", { headers: account.auth });
  expect(res.body.this_period).toMatchObject({
    jobs_created: 4,
    jobs_completed: 2,
    jobs_failed: 1,
  });
});
