import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PLANS } from "../../schema/plans.ts";
import { api, freshIp, ORIGIN, openApiDocument } from "./support/api.ts";

describe("GET /v1/pricing", () => {
  it("lists every plan with its price, credits and limits", async () => {
    const res = await api("GET", "/v1/pricing");
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.plans.map((p: { name: string }) => [p.name, p]));
    expect(Object.keys(byName)).toEqual(["free", "starter", "pro", "scale"]);
    expect(byName.starter).toMatchObject({ price_usd: 19, credits_per_month: 1500 });
    expect(byName.free.limits.max_resolution).toBe(720);
    expect(res.body.packs[0]).toMatchObject({ price_usd: 10, credits: 500 });
    expect(res.headers.get("X-RateLimit-Limit")).toBe("60");
  });
});

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document, version 1.0.0, naming every endpoint of the spec", async () => {
    const doc = (await openApiDocument()) as unknown as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe("1.0.0");
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        "GET /batches",
        "GET /batches/{id}",
        "POST /batches",
        "GET /demo/{id}",
        "GET /jobs",
        "GET /jobs/{id}",
        "GET /pricing",
        "GET /usage",
        "GET /webhook-deliveries",
        "POST /demo",
        "POST /jobs",
      ].sort(),
    );
    for (const name of [
      "Job",
      "Frame",
      "JobError",
      "DemoJob",
      "Usage",
      "Error",
      "CreateJobRequest",
      "JobList",
      "WebhookDelivery",
      "WebhookDeliveryList",
    ]) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
  });

  it("serves an interactive reference page at /docs that loads the document", async () => {
    const res = await exports.default.fetch(`${ORIGIN}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain('data-url="/v1/openapi.json"');
  });
});

describe("unknown routes", () => {
  it.each(["/v1/nothing-here", "/v1/jobs/", "/nothing-here"])(
    "answer %s with 404 NotFound, not JobNotFound, counted per address",
    async (path) => {
      const res = await exports.default.fetch(`${ORIGIN}${path}`, {
        headers: { "cf-connecting-ip": freshIp() },
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({
        name: "NotFound",
        code: 404,
        className: "not-found",
        data: { name: "NotFound" },
      });
      expect(res.headers.get("X-RateLimit-Limit")).toBe("60");
      expect(res.headers.get("X-RateLimit-Remaining")).toBe("59");
    },
  );
});

it("plan table matches the pricing the spec lists", () => {
  expect(PLANS.free.monthly_credits).toBe(60);
  expect(PLANS.scale.price_usd).toBe(199);
});
