// One suite for every authenticated route: the same credential checks, the same error shape,
// rate headers on each answer, and no plaintext key anywhere in D1.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { generateApiKey, KEY_PREFIX } from "../../schema/api-keys.ts";
import { api, createAccount } from "./support/api.ts";

const JOB_ID = "00000000-0000-4000-8000-000000000000";
const AUTHENTICATED_ROUTES: { method: string; path: string; body?: unknown }[] = [
  { method: "POST", path: "/v1/jobs", body: { url: "https://example.com/video.mp4" } },
  { method: "GET", path: "/v1/jobs" },
  { method: "GET", path: `/v1/jobs/${JOB_ID}` },
  { method: "GET", path: "/v1/usage" },
];

describe.each(AUTHENTICATED_ROUTES)("$method $path", (route) => {
  const call = (headers: Record<string, string>) =>
    api(route.method, route.path, { body: route.body, headers });

  it("without a credential answers 401 AuthenticationRequired", async () => {
    const res = await call({});
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({
      name: "NotAuthenticated",
      code: 401,
      className: "not-authenticated",
      data: { name: "AuthenticationRequired" },
    });
    expect(res.body.data.userMessage.length).toBeGreaterThan(0);
  });

  it.each([
    ["a Bearer value without the key prefix", { authorization: "Bearer sk_live_abcdef" }],
    ["a Basic credential", { authorization: "Basic dXNlcjpwYXNz" }],
    ["an empty Bearer value", { authorization: "Bearer " }],
  ])("with %s answers InvalidApiKey malformed", async (_label, headers) => {
    const res = await call(headers);
    expect(res.status).toBe(401);
    expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "malformed" });
  });

  it.each([
    ["an unknown well-formed key", () => generateApiKey()],
    ["a key whose checksum does not match", () => `${generateApiKey().slice(0, -1)}0`],
    ["a prefixed key of the wrong length", () => `${KEY_PREFIX}abc`],
  ])("with %s answers InvalidApiKey invalid", async (_label, makeKey) => {
    const key = makeKey();
    for (const headers of [{ authorization: `Bearer ${key}` }, { "x-api-key": key }] as Record<
      string,
      string
    >[]) {
      const res = await call(headers);
      expect(res.status).toBe(401);
      expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
    }
  });

  it("takes any X-API-Key value as a key, so one without the prefix is invalid (spec §5.7)", async () => {
    const res = await call({ "x-api-key": "not-a-stills-key" });
    expect(res.status).toBe(401);
    expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
  });

  it("refuses a revoked key as invalid", async () => {
    const account = await createAccount();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
      .bind(new Date().toISOString(), account.keyId)
      .run();
    const res = await call(account.auth);
    expect(res.status).toBe(401);
    expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
  });

  it("accepts a valid key in either header", async () => {
    const account = await createAccount();
    for (const headers of [account.auth, { "x-api-key": account.key }]) {
      const res = await call(headers);
      expect(res.status, JSON.stringify(res.body)).not.toBe(401);
      expect(res.headers.get("X-RateLimit-Limit")).toBe("30");
    }
  });
});

it("keeps only SHA-256 hashes of keys in D1", async () => {
  const account = await createAccount();
  const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?")
    .bind(account.keyId)
    .first<Record<string, string>>();
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(account.key)),
  );
  expect(row?.key_hash).toBe([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
  const secret = account.key.slice(KEY_PREFIX.length);
  for (const table of ["api_keys", "accounts", "credit_ledger"]) {
    const { results } = await env.DB.prepare(`SELECT * FROM ${table}`).all();
    expect(JSON.stringify(results), table).not.toContain(secret);
  }
});
