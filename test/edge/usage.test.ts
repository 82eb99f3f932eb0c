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
