// Issue 17's HTTP-level points: what a careless curl or a generated client runs into. A body
// that is not JSON, a wrong method, an unknown route and an oversized body each get a 4xx in
// the spec's error shape, never 503 and never JobNotFound.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAccount, freshIp, ORIGIN, openApiDocument } from "./support/api.ts";

const VIDEO = "https://cdn.example.com/clips/talk.mp4";

describe("a body that is not JSON", () => {
  it.each([
    ["curl -d (a form)", "application/x-www-form-urlencoded", `url=${encodeURIComponent(VIDEO)}`],
    ["text/plain", "text/plain", JSON.stringify({ url: VIDEO })],
    ["no Content-Type", undefined, JSON.stringify({ url: VIDEO })],
  ])("POST /v1/jobs with %s answers 400 InvalidRequest", async (_label, type, body) => {
    const account = await createAccount();
    const res = await exports.default.fetch(`${ORIGIN}/v1/jobs`, {
      method: "POST",
      headers: {
        ...account.auth,
        "cf-connecting-ip": freshIp(),
        ...(type ? { "content-type": type } : {}),
      },
      body: new TextEncoder().encode(body),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      name: "BadRequest",
      code: 400,
      className: "bad-request",
      data: { name: "InvalidRequest" },
    });
  });

  it("POST /v1/demo with a form answers 400 InvalidRequest and takes no allowance", async () => {
    const ip = freshIp();
    const res = await api("POST", "/v1/demo", {
      rawBody: `url=${encodeURIComponent(VIDEO)}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      ip,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
    expect(res.body.message).toContain("application/json");
    const ok = await api("POST", "/v1/demo", { body: { url: VIDEO }, ip });
    expect(ok.status).toBe(201);
  });
});

describe("a wrong method", () => {
  it("DELETE /v1/jobs/{id} answers 405 with Allow and the rate-limit headers", async () => {
    const account = await createAccount();
    const res = await api("DELETE", `/v1/jobs/${crypto.randomUUID()}`, { headers: account.auth });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, HEAD");
    expect(res.body).toMatchObject({
      name: "MethodNotAllowed",
      code: 405,
      className: "method-not-allowed",
      data: { name: "MethodNotAllowed" },
    });
    expect(res.headers.get("X-RateLimit-Limit")).toMatch(/^\d+$/);
  });

  it.each([
    ["PUT", "/v1/jobs", "GET, HEAD, POST"],
    ["GET", "/v1/demo", "POST"],
    ["POST", "/v1/usage", "GET, HEAD"],
    ["PATCH", "/v1/demo/00000000-0000-4000-8000-000000000000", "GET, HEAD"],
  ])("%s %s answers 405 Allow: %s", async (method, path, allow) => {
    const res = await api(method, path, method === "GET" ? {} : { rawBody: "{}" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe(allow);
  });

  it("OPTIONS names the methods without an error", async () => {
    const res = await exports.default.fetch(`${ORIGIN}/v1/jobs`, {
      method: "OPTIONS",
      headers: { "cf-connecting-ip": freshIp() },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("Allow")).toBe("GET, HEAD, POST");
  });
});

describe("body size", () => {
  it("refuses an oversized create body with 400 before reading it", async () => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", {
      rawBody: JSON.stringify({ url: VIDEO, note: "x".repeat(40 * 1024) }),
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
    expect(res.body.message).toContain("32 KiB");
  });

  it("refuses an unauthenticated demo body over 4 KiB, and 300 KiB anywhere else", async () => {
    for (const [size, limit] of [
      [8 * 1024, "4 KiB"],
      [90 * 1024 * 1024, "256 KiB"],
    ] as const) {
      const demo = await api("POST", "/v1/demo", {
        rawBody: JSON.stringify({ url: `${VIDEO}?${"a".repeat(size)}` }),
      });
      expect(demo.status).toBe(400);
      expect(demo.body.message).toContain(limit);
    }
    // A streamed body without Content-Length is counted as it arrives.
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 300; i++) controller.enqueue(new Uint8Array(1024));
        controller.close();
      },
    });
    const elsewhere = await exports.default.fetch(`${ORIGIN}/somewhere-else`, {
      method: "POST",
      headers: { "cf-connecting-ip": freshIp() },
      body: stream,
    });
    expect(elsewhere.status).toBe(400);
    expect((await elsewhere.json<{ message: string }>()).message).toContain("256 KiB");
  });

  it("accepts the largest job a client can send: 500 timestamps of a week-long video", async () => {
    const account = await createAccount({ plan: "scale" });
    const timestamps = Array.from({ length: 500 }, (_, i) => 604_799.123456 - i);
    const res = await api("POST", "/v1/jobs", {
      body: { url: `${VIDEO}?${"q".repeat(1900)}`, timestamps },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
  });
});

describe("the OpenAPI document", () => {
  it("has a server URL ending in /v1 and paths relative to it, like the spec", async () => {
    const doc = (await openApiDocument()) as any;
    expect(doc.servers).toEqual([{ url: `${ORIGIN}/v1`, description: expect.any(String) }]);
    expect(Object.keys(doc.paths).every((p) => !p.startsWith("/v1"))).toBe(true);
    expect(doc.info.license.name).toBeTruthy();
  });

  it("declares the public operations public on purpose and the others authenticated", async () => {
    const doc = (await openApiDocument()) as any;
    expect(doc.paths["/pricing"].get.security).toEqual([]);
    expect(doc.paths["/demo"].post.security).toEqual([]);
    expect(doc.paths["/demo/{id}"].get.security).toEqual([]);
    expect(doc.paths["/jobs"].post.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    // A bad demo id is a 404: the document lists no 400 it never sends.
    expect(Object.keys(doc.paths["/demo/{id}"].get.responses).sort()).toEqual([
      "200",
      "404",
      "429",
      "503",
    ]);
  });

  it("types skip and limit as integers and refuses an empty value of either", async () => {
    const doc = (await openApiDocument()) as any;
    const params = doc.paths["/jobs"].get.parameters;
    for (const name of ["skip", "limit"]) {
      expect(params.find((p: { name: string }) => p.name === name).schema.type).toBe("integer");
    }
    const account = await createAccount();
    for (const query of ["skip=", "limit=", "skip=1.5", "skip=1e3"]) {
      const res = await api("GET", `/v1/jobs?${query}`, { headers: account.auth });
      expect(res.status, query).toBe(400);
      expect(res.body.message).toContain(query.split("=")[0]);
    }
  });
});
