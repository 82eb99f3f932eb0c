import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { FLUSH_AFTER_MS, type RateLimiter } from "../../edge/durable/rate-limiter.ts";
import { setLimiterClock } from "../../edge/middleware/rate-limit.ts";
import { api, createAccount, freshIp } from "./support/api.ts";

describe("per-key rate limit", () => {
  it("counts down X-RateLimit-Remaining and answers 429 with Retry-After past the plan's rate", async () => {
    const account = await createAccount(); // free: 30 requests per minute
    const remaining: number[] = [];
    for (let i = 0; i < 30; i++) {
      // Every authenticated route counts each request once.
      const path = ["/v1/usage", "/v1/jobs", `/v1/jobs/${crypto.randomUUID()}`][i % 3];
      const res = await api("GET", path, { headers: account.auth });
      expect(res.status).toBe(i % 3 === 2 ? 404 : 200);
      expect(res.headers.get("X-RateLimit-Limit")).toBe("30");
      remaining.push(Number(res.headers.get("X-RateLimit-Remaining")));
    }
    expect(remaining).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i));

    const limited = await api("GET", "/v1/usage", { headers: account.auth });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({
      name: "TooManyRequests",
      code: 429,
      className: "too-many-requests",
      data: { name: "RateLimited" },
    });
    const retryAfter = Number(limited.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    expect(limited.headers.get("X-RateLimit-Remaining")).toBe("0");
  });

  it("limits each key on its own, whatever address it comes from", async () => {
    const a = await createAccount();
    const b = await createAccount();
    for (let i = 0; i < 30; i++) await api("GET", "/v1/usage", { headers: a.auth });
    expect((await api("GET", "/v1/usage", { headers: a.auth })).status).toBe(429);
    expect((await api("GET", "/v1/usage", { headers: b.auth })).status).toBe(200);
  });
});

describe("leases at high rates", { timeout: 60_000 }, () => {
  afterEach(() => setLimiterClock(undefined));

  it("never admit more than the plan's rate, and count Remaining down", async () => {
    // Time stands still, so the allowance never refills: exactly a minute's burst is there.
    const t0 = Date.now();
    setLimiterClock(() => t0);
    const account = await createAccount({ plan: "pro" }); // 300 a minute: leases of up to 5
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 320; i++) {
      const res = await api("GET", "/v1/jobs?limit=1", { headers: account.auth });
      statuses.push(res.status);
      if (res.status === 200) remaining.push(Number(res.headers.get("X-RateLimit-Remaining")));
    }
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted).toBeLessThanOrEqual(300);
    // Unspent lease tokens are lost, never more than a few.
    expect(admitted).toBeGreaterThanOrEqual(295);
    expect(statuses.indexOf(429)).toBe(admitted);
    for (let i = 1; i < remaining.length; i++)
      expect(remaining[i]).toBeLessThanOrEqual(remaining[i - 1]);
  });

  it("admit a concurrent burst within the allowance whole (one lease fetch at a time)", async () => {
    const t0 = Date.now();
    setLimiterClock(() => t0);
    const account = await createAccount({ plan: "scale" }); // 1000 a minute: leases of 16
    const burst = await Promise.all(
      Array.from({ length: 100 }, () => api("GET", "/v1/jobs?limit=1", { headers: account.auth })),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(100).fill(200));
  });
});

describe("per-IP rate limit of public endpoints and failed authentication", () => {
  it("limits an address to 60 requests a minute", async () => {
    const ip = freshIp();
    for (let i = 0; i < 60; i++) expect((await api("GET", "/v1/pricing", { ip })).status).toBe(200);
    const limited = await api("GET", "/v1/pricing", { ip });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect((await api("GET", "/v1/pricing", { ip: freshIp() })).status).toBe(200);
  });

  it("counts failed authentication against the address, so keys cannot be guessed fast", async () => {
    const ip = freshIp();
    for (let i = 0; i < 60; i++) {
      expect(
        (await api("GET", "/v1/usage", { ip, headers: { "x-api-key": "guess" } })).status,
      ).toBe(401);
    }
    const limited = await api("GET", "/v1/usage", { ip, headers: { "x-api-key": "guess" } });
    expect(limited.status).toBe(429);
  });
});

describe("RateLimiter (GCRA)", () => {
  it("refills one request per interval and keeps its state in storage", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("unit-test"));
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 6; i++) expect((await stub.take(6, 1, t0)).allowed).toBe(true);
    const denied = await stub.take(6, 1, t0);
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfter: 10 });
    // One interval (10 s at 6/min) later exactly one more passes.
    expect((await stub.take(6, 1, t0 + 10_000)).allowed).toBe(true);
    expect((await stub.take(6, 1, t0 + 10_000)).allowed).toBe(false);
    // Counts reach storage within FLUSH_AFTER_MS.
    await new Promise((r) => setTimeout(r, FLUSH_AFTER_MS + 200));
    const stored = await runInDurableObject(stub, (_instance: RateLimiter, state) =>
      state.storage.get<number>("tat"),
    );
    expect(stored).toBe(t0 + 70_000);
  });

  it("grants several requests at once only as far as the allowance holds", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("lease-test"));
    const t0 = 1_700_000_000_000;
    expect(await stub.take(10, 4, t0)).toMatchObject({ allowed: true, granted: 4, remaining: 6 });
    expect(await stub.take(10, 4, t0)).toMatchObject({ allowed: true, granted: 4, remaining: 2 });
    expect(await stub.take(10, 4, t0)).toMatchObject({ allowed: true, granted: 2, remaining: 0 });
    expect(await stub.take(10, 4, t0)).toMatchObject({ allowed: false, granted: 0, retryAfter: 6 });
    // One interval (6 s at 10/min) later, exactly one more.
    expect(await stub.take(10, 4, t0 + 6000)).toMatchObject({ allowed: true, granted: 1 });
  });

  it("allows the demo's daily count per address and resets the next UTC day", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("daily-test"));
    const noon = Date.UTC(2026, 10, 22, 12);
    for (let i = 0; i < 3; i++) expect((await stub.takeDaily(3, noon)).allowed).toBe(true);
    const denied = await stub.takeDaily(3, noon);
    expect(denied).toMatchObject({ allowed: false, retryAfter: 12 * 3600 });
    expect((await stub.takeDaily(3, noon + 12 * 3600_000)).allowed).toBe(true);
  });
});
