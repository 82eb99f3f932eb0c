// planOf (edge/plan-of.ts): the one rule for an account's plan. A plan column naming no plan
// we sell (an old release's name, a hand edit) means the free plan's limits, never none; the
// usage endpoint, which reads it, answers with the free plan for such an account.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { planNameOf, planOf } from "../../edge/plan-of.ts";
import { PLAN_NAMES, PLANS } from "../../schema/plans.ts";
import { api, createAccount } from "./support/api.ts";

describe("planOf", () => {
  it("gives each plan we sell its own table row, by name or by account", () => {
    for (const name of PLAN_NAMES) {
      expect(planOf(name)).toBe(PLANS[name]);
      expect(planOf({ plan: name })).toBe(PLANS[name]);
      expect(planNameOf({ plan: name })).toBe(name);
    }
  });

  it("gives the free plan for a missing or unknown name, including object-prototype names", () => {
    for (const odd of [
      "",
      "gold",
      "Starter",
      " pro",
      "__proto__",
      "constructor",
      null,
      undefined,
    ]) {
      expect(planOf(odd)).toBe(PLANS.free);
      expect(planOf({ plan: odd ?? null })).toBe(PLANS.free);
      expect(planNameOf(odd)).toBe("free");
    }
  });
});

it("GET /v1/usage reports an account on a retired plan name with the free plan's allowance", async () => {
  const account = await createAccount({ plan: "pro" });
  await env.DB.prepare("UPDATE accounts SET plan = 'legacy-gold' WHERE id = ?")
    .bind(account.accountId)
    .run();
  const res = await api("GET", "/v1/usage", { headers: account.auth });
  expect(res.status).toBe(200);
  const { max_resolution: _, ...freeLimits } = PLANS.free.limits;
  expect(res.body.plan).toBe("free");
  expect(res.body.credits.monthly_allowance).toBe(PLANS.free.monthly_credits);
  expect(res.body.limits).toEqual(freeLimits);
  // The credits the account holds are its own, whatever its plan's name says.
  expect(res.body.credits.plan).toBe(PLANS.pro.monthly_credits);
});
