import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FLUSH_AFTER_MS, type RateLimiter } from "../../edge/durable/rate-limiter.ts";
import { api, createAccount, freshIp } from "./support/api.ts";

describe("per-key rate limit", () => {
  it("counts down X-RateLimit-Remaining and answers 429 with Retry-After past the plan's rate", async () => {
    const account = await createAccount(); // free: 30 requests per minute
    const remaining: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await api("GET", "/v1/usage", { headers: account.auth });
      expect(res.status).toBe(200);
      expect(res.headers.get("X-RateLimit-Limit")).toBe("30");
      remaining.push(Number(res.headers.get("X-RateLimit-Remaining")));
    }
    expect(remaining[0]).toBe(29);
    expect(remaining.at(-1)).toBe(0);
    for (let i = 1; i < remaining.length; i++)
      expect(remaining[i]).toBeLessThanOrEqual(remaining[i - 1]);

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
    for (let i = 0; i < 6; i++) expect((await stub.take(6, t0)).allowed).toBe(true);
    const denied = await stub.take(6, t0);
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfter: 10 });
    // One interval (10 s at 6/min) later exactly one more passes.
    expect((await stub.take(6, t0 + 10_000)).allowed).toBe(true);
    expect((await stub.take(6, t0 + 10_000)).allowed).toBe(false);
    // Counts reach storage within FLUSH_AFTER_MS.
    await new Promise((r) => setTimeout(r, FLUSH_AFTER_MS + 200));
    const stored = await runInDurableObject(stub, (_instance: RateLimiter, state) =>
      state.storage.get<number>("tat"),
    );
    expect(stored).toBe(t0 + 70_000);
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
