// The worker's settings (edge/config.ts) and request ids (edge/app.ts, edge/log.ts): a bad
// value stops requests with one log line naming it; every answer carries X-Request-Id, and
// every log line written while serving it carries the same id.

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LOCAL_ORIGIN, parseEdgeConfig, publicBaseUrl } from "../../edge/config.ts";
import { app } from "../../edge/index.ts";
import { logEvent, withLogContext } from "../../edge/log.ts";
import { api, ORIGIN } from "./support/api.ts";

const SECRETS = { INTERNAL_TOKEN: "a".repeat(32), FILE_URL_SECRET: "b".repeat(32) };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Every JSON line the worker logs while `fn` runs. */
async function loggedLines(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const keep = (line: unknown) => lines.push(String(line));
  const out = vi.spyOn(console, "log").mockImplementation(keep);
  const err = vi.spyOn(console, "error").mockImplementation(keep);
  try {
    await fn();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return lines.flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
}

async function fetchWith(workerEnv: Env, path: string, headers: Record<string, string> = {}) {
  const ctx = createExecutionContext();
  const response = await app.fetch(
    new Request(`${ORIGIN}${path}`, {
      headers: { "cf-connecting-ip": "198.51.100.77", ...headers },
    }),
    workerEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

afterEach(() => vi.restoreAllMocks());

describe("edge settings", () => {
  it("have one default each when only the secrets are set", () => {
    const config = parseEdgeConfig(SECRETS);
    expect(config).toMatchObject({
      publicBaseUrl: undefined,
      extractorUrl: undefined,
      allowPrivateNetwork: false,
      demoDailyLimit: 5,
      mail: { sender: "local", from: "Stills <sign-in@stills.dev>" },
      stripe: { apiBase: undefined, secretKey: undefined, webhookSecret: undefined },
    });
  });

  it("read wrangler.toml's empty strings as unset and numbers from text", () => {
    const config = parseEdgeConfig({
      ...SECRETS,
      PUBLIC_BASE_URL: "https://api.stills.dev/",
      STILLS_DEMO_DAILY_LIMIT: "12",
      STRIPE_API_BASE: "",
      R2_ACCOUNT_ID: "",
      MAIL_SENDER: "resend",
    });
    expect(config.publicBaseUrl).toBe("https://api.stills.dev");
    expect(config.demoDailyLimit).toBe(12);
    expect(config.stripe.apiBase).toBeUndefined();
    expect(config.mail.sender).toBe("resend");
  });

  it("refuse bad values, naming every one and what is wrong", () => {
    const bad = () =>
      parseEdgeConfig({
        FILE_URL_SECRET: SECRETS.FILE_URL_SECRET,
        PUBLIC_BASE_URL: "https://api.stills.dev/v1",
        STILLS_DEMO_DAILY_LIMIT: "lots",
        MAIL_SENDER: "carrier-pigeon",
        STILLS_ALLOW_PRIVATE_NETWORK: "yes",
        EXTRACTOR_URL: "ftp://extractor",
      });
    expect(bad).toThrow(/^edge settings: /);
    const message = (() => {
      try {
        bad();
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const name of [
      "PUBLIC_BASE_URL must be an origin",
      "STILLS_DEMO_DAILY_LIMIT",
      "MAIL_SENDER",
      "STILLS_ALLOW_PRIVATE_NETWORK",
      "EXTRACTOR_URL must be an http(s) URL",
      "INTERNAL_TOKEN is not set (wrangler secret put INTERNAL_TOKEN)",
    ]) {
      expect(message).toContain(name);
    }
  });

  it("give the public origin by one rule: the setting, else the request's, else the local one", () => {
    const configured = { ...env, PUBLIC_BASE_URL: "https://api.example.com/" } as Env;
    const unset = { ...env, PUBLIC_BASE_URL: "" } as Env;
    expect(publicBaseUrl(configured, "http://other.test/x")).toBe("https://api.example.com");
    expect(publicBaseUrl(unset, "http://other.test:8080/v1/jobs")).toBe("http://other.test:8080");
    expect(publicBaseUrl(unset)).toBe(LOCAL_ORIGIN);
  });

  it("a bad value answers every request with the spec's error and logs one line naming it", async () => {
    const broken = { ...env, STILLS_DEMO_DAILY_LIMIT: "lots" } as Env;
    let response: Response | undefined;
    const lines = await loggedLines(async () => {
      response = await fetchWith(broken, "/v1/pricing");
    });
    expect(response?.status).toBe(503);
    const body = (await response?.json()) as { data: { name: string }; code: number };
    expect(body).toMatchObject({ code: 503, data: { name: "ServiceUnavailable" } });
    const logged = lines.filter((l) => l.event === "config.invalid");
    expect(logged).toHaveLength(1);
    expect(logged[0].error).toContain("STILLS_DEMO_DAILY_LIMIT");
    expect(logged[0].request).toBe(response?.headers.get("X-Request-Id"));
    // The same worker with good settings answers.
    expect((await fetchWith(env, "/v1/pricing")).status).toBe(200);
  });
});

describe("request ids", () => {
  it("every answer carries a new UUID as X-Request-Id, errors and unknown routes too", async () => {
    const ok = await api("GET", "/v1/pricing");
    const unauthenticated = await api("GET", "/v1/usage");
    const missing = await api("GET", "/v1/nothing-here");
    const ids = [ok, unauthenticated, missing].map((r) => r.headers.get("X-Request-Id"));
    expect(unauthenticated.status).toBe(401);
    expect(missing.status).toBe(404);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
    expect((await fetchWith(env, "/healthz")).headers.get("X-Request-Id")).toMatch(UUID);
  });

  it("keeps a sane incoming id and replaces one that is not", async () => {
    const sane = "req_2026-11-23=abc";
    const kept = await api("GET", "/v1/pricing", { headers: { "X-Request-Id": sane } });
    expect(kept.headers.get("X-Request-Id")).toBe(sane);
    for (const hostile of ["a b", 'x"}{', "<script>", "a".repeat(129)]) {
      const res = await api("GET", "/v1/pricing", { headers: { "X-Request-Id": hostile } });
      expect(res.headers.get("X-Request-Id")).toMatch(UUID);
    }
  });

  it("is in every line logged while serving the request, without the caller passing it", async () => {
    let response: Response | undefined;
    const lines = await loggedLines(async () => {
      // The settings check logs from inside the middleware chain, passing no request id.
      response = await fetchWith({ ...env, MAIL_SENDER: "pigeon" } as Env, "/v1/pricing", {
        "X-Request-Id": "trace-me-123",
      });
    });
    expect(response?.headers.get("X-Request-Id")).toBe("trace-me-123");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.request).toBe("trace-me-123");
  });

  it("log contexts nest and end with their call", async () => {
    const lines = await loggedLines(async () => {
      await withLogContext({ request: "r1", job: "j1" }, async () => {
        await Promise.resolve();
        await withLogContext({ attempt: "a1" }, async () => logEvent("info", "inner"));
        logEvent("info", "outer", { extra: 1 });
      });
      logEvent("info", "after");
    });
    expect(
      lines.map(({ event, request, job, attempt, side }) => ({
        event,
        request,
        job,
        attempt,
        side,
      })),
    ).toEqual([
      { event: "inner", request: "r1", job: "j1", attempt: "a1", side: "edge" },
      { event: "outer", request: "r1", job: "j1", attempt: undefined, side: "edge" },
      { event: "after", request: undefined, job: undefined, attempt: undefined, side: "edge" },
    ]);
  });
});
