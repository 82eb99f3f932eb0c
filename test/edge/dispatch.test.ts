// One interface, two ways to reach the extractor: a Cloudflare Container binding in
// production, an HTTP address locally. Both send the same authenticated request.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import {
  CONTAINER_POOL_SIZE,
  extractorFor,
  keepExtractorAwake,
  poolInstanceFor,
  TENANT_INSTANCES,
} from "../../edge/jobs/dispatch.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { extractorCalls, setExtractor } from "./support/fake-extractor.ts";

const request: ExtractRequest = {
  job_id: "3f2a9c1e-0000-4000-8000-000000000001",
  kind: "job",
  url: "https://cdn.example.com/a.mp4",
  platform: "direct",
  options: { mode: "count", count: 2, format: "jpg", resolution: 720, output: "urls" },
  max_video_seconds: 900,
  clip_to_max: false,
  max_frames: 300,
  callback: { base_url: "https://stills.test", token: "t" },
};

it("locally posts the job to EXTRACTOR_URL/extract with the shared secret", async () => {
  setExtractor(() => Response.json({ status: "completed" }));
  const response = await extractorFor(env).extract(request);
  expect(response.status).toBe(200);
  expect(extractorCalls).toEqual([request]);
});

it("passes the edge's request id on as X-Request-Id", async () => {
  const seen: (string | null)[] = [];
  const containers = {
    idFromName: (name: string) => ({ name }),
    get: () => ({
      fetch: async (req: Request) => {
        seen.push(req.headers.get("x-request-id"));
        return Response.json({ accepted: true }, { status: 202 });
      },
    }),
  } as unknown as NonNullable<Env["EXTRACTOR"]>;
  const client = extractorFor({ ...env, EXTRACTOR: containers });
  await client.extract(request, "req-123");
  await client.extract(request);
  expect(seen).toEqual(["req-123", null]);
});

it("keeps awake the container instance the job was sent to (a job holds no request open)", async () => {
  const extracted: string[] = [];
  const awake: string[] = [];
  const containers = {
    idFromName: (name: string) => ({ name }),
    get: (id: { name: string }) => ({
      fetch: async () => {
        extracted.push(id.name);
        return Response.json({ accepted: true }, { status: 202 });
      },
      keepAwake: async () => {
        awake.push(id.name);
      },
    }),
  } as unknown as NonNullable<Env["EXTRACTOR"]>;
  const production = { ...env, EXTRACTOR: containers };
  const job = { ...request, tenant: "account:a" };
  await extractorFor(production).extract(job);
  await keepExtractorAwake(production, { job_id: job.job_id, tenant: job.tenant });
  expect(awake).toEqual(extracted);
  // Locally there is no container: nothing to keep awake, nothing fails.
  await keepExtractorAwake(env, { job_id: job.job_id, tenant: job.tenant });
  expect(awake).toHaveLength(1);
});

it("in production sends the same request to a container of a fixed pool, chosen by job id", async () => {
  const seen: { instance: string; url: string; auth: string | null; body: unknown }[] = [];
  const containers = {
    idFromName: (name: string) => ({ name }),
    get: (id: { name: string }) => ({
      fetch: async (req: Request) => {
        seen.push({
          instance: id.name,
          url: req.url,
          auth: req.headers.get("authorization"),
          body: await req.json(),
        });
        return Response.json({ status: "completed" });
      },
    }),
  } as unknown as NonNullable<Env["EXTRACTOR"]>;
  const client = extractorFor({ ...env, EXTRACTOR: containers });
  await client.extract(request);
  await client.extract({ ...request, job_id: "a1000000-0000-4000-8000-000000000002" });
  await client.extract(request);
  expect(seen.map((s) => s.url)).toEqual(Array(3).fill("http://extractor/extract"));
  expect(seen.every((s) => s.auth === `Bearer ${env.INTERNAL_TOKEN}`)).toBe(true);
  expect(seen[0].body).toEqual(request);
  expect(seen[0].instance).toMatch(/^extractor-[0-7]$/);
  expect(seen[2].instance).toBe(seen[0].instance);
  expect(seen[1].instance).not.toBe(seen[0].instance);
  expect(extractorCalls).toEqual([]);
});

it("spreads one tenant's jobs over TENANT_INSTANCES instances of the pool, never more", () => {
  const instancesOf = (tenant: string) =>
    new Set(
      Array.from({ length: 200 }, (_, i) =>
        poolInstanceFor({
          ...request,
          tenant,
          job_id: `3f2a9c1e-0000-4000-8000-${String(i).padStart(12, "0")}`,
        }),
      ),
    );
  for (const tenant of ["account:a", "account:b", "demo:c0ffee"]) {
    const instances = instancesOf(tenant);
    expect(instances.size).toBe(TENANT_INSTANCES);
    for (const instance of instances) {
      expect(instance).toBeGreaterThanOrEqual(0);
      expect(instance).toBeLessThan(CONTAINER_POOL_SIZE);
    }
  }
  // The same job always goes to the same instance.
  const job = { ...request, tenant: "account:a" };
  expect(poolInstanceFor(job)).toBe(poolInstanceFor({ ...job }));
});
