// Load: the rate limiter under ten times a plan's requests per minute for two minutes, through
// the real HTTP path (auth, leases, the Durable Object). Time is simulated: the limiter takes
// its clock from the test, which advances it between requests, so two minutes of traffic
// take seconds and the counts are exact.
import { afterEach, describe, expect, it } from "vitest";
import { setLimiterClock } from "../../edge/middleware/rate-limit.ts";
import { PLANS, type PlanName } from "../../schema/plans.ts";
import { api, createAccount } from "./support/api.ts";

afterEach(() => setLimiterClock(undefined));

describe("Load", { timeout: 300_000 }, () => {
  it.each(["free", "starter"] as PlanName[])(
    "admits the %s plan's allowance ± 1 per minute at 10× its rate for two minutes, and every 429 says when to retry",
    async (planName) => {
      const perMinute = PLANS[planName].limits.requests_per_minute;
      const account = await createAccount({ plan: planName });
      const start = Date.now();
      let now = start;
      setLimiterClock(() => now);
      const spacing = 60_000 / (perMinute * 10);
      const admitted = [0, 0];
      const retryAfters: (string | null)[] = [];
      for (let t = 0; t < 120_000; t += spacing) {
        now = start + t;
        const res = await api("GET", `/v1/jobs/${crypto.randomUUID()}`, { headers: account.auth });
        if (res.status === 429) {
          retryAfters.push(res.headers.get("Retry-After"));
          expect(res.body.data.name).toBe("RateLimited");
        } else {
          expect(res.status).toBe(404); // counted, then the (random) job is not found
          admitted[Math.floor(t / 60_000)]++;
        }
      }
      // A fresh allowance is a whole minute's burst, then it refills at the plan's rate: the
      // first minute admits the burst and a minute's refill, the second a minute's refill.
      expect(Math.abs(admitted[0] - 2 * perMinute)).toBeLessThanOrEqual(1);
      expect(Math.abs(admitted[1] - perMinute)).toBeLessThanOrEqual(1);
      expect(retryAfters.length).toBe(Math.round(120_000 / spacing) - admitted[0] - admitted[1]);
      // Every refusal says when the next request passes: within one refill interval.
      const interval = Math.ceil(60 / perMinute);
      for (const value of retryAfters) {
        expect(value).toMatch(/^\d+$/);
        expect(Number(value)).toBeGreaterThanOrEqual(1);
        expect(Number(value)).toBeLessThanOrEqual(interval);
      }
    },
  );
});
