import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { api, freshIp } from "./support/api.ts";
import { extractorCalls } from "./support/fake-extractor.ts";

describe("POST /v1/demo", () => {
  it("creates a demo job without credentials and queues 6 JPG frames at most 640 px wide", async () => {
    const res = await api("POST", "/v1/demo", {
      body: { url: "https://www.youtube.com/shorts/dQw4w9WgXcQ" },
    });
    expect(res.status).toBe(201);
    // The demo may already be on its way to the extractor when the answer is read back.
    expect(["queued", "processing"]).toContain(res.body.status);
    expect(res.body).toMatchObject({
      object: "demo_job",
      platform: "youtube",
      frames: [],
      error: null,
    });
    for (const field of ["url", "options", "credits_charged", "zip_url"])
      expect(res.body).not.toHaveProperty(field);
    await vi.waitFor(() => expect(extractorCalls.map((c) => c.job_id)).toContain(res.body.id), {
      timeout: 5000,
    });
    const call = extractorCalls.find((c) => c.job_id === res.body.id);
    expect(call).toMatchObject({
      kind: "demo",
      options: { mode: "count", count: 6, format: "jpg", max_width: 640 },
      max_video_seconds: 900,
      clip_to_max: true,
    });
  });

  it("stops an address after its daily allowance with 429 DemoLimitReached", async () => {
    const ip = freshIp();
    const limit = Number(env.STILLS_DEMO_DAILY_LIMIT);
    for (let i = 0; i < limit; i++) {
      expect(
        (await api("POST", "/v1/demo", { ip, body: { url: "https://cdn.example.com/a.mp4" } }))
          .status,
      ).toBe(201);
    }
    const res = await api("POST", "/v1/demo", {
      ip,
      body: { url: "https://cdn.example.com/a.mp4" },
    });
    expect(res.status).toBe(429);
    expect(res.body.data.name).toBe("DemoLimitReached");
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(
      (
        await api("POST", "/v1/demo", {
          ip: freshIp(),
          body: { url: "https://cdn.example.com/a.mp4" },
        })
      ).status,
    ).toBe(201);
  });

  it("does not spend the allowance on a bad link, and refuses extra fields", async () => {
    const ip = freshIp();
    const bad = await api("POST", "/v1/demo", { ip, body: { url: "http://localhost/a.mp4" } });
    expect(bad.status).toBe(400);
    expect(bad.body.data.name).toBe("InvalidUrl");
    const extra = await api("POST", "/v1/demo", {
      ip,
      body: { url: "https://cdn.example.com/a.mp4", count: 50 },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain("count");
    expect(
      (await api("POST", "/v1/demo", { ip, body: { url: "https://cdn.example.com/a.mp4" } }))
        .status,
    ).toBe(201);
  });
});

describe("GET /v1/demo/{id}", () => {
  it("reads a demo job and answers 404 for an unknown one", async () => {
    const created = await api("POST", "/v1/demo", { body: { url: "https://vimeo.com/76979871" } });
    const res = await api("GET", `/v1/demo/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.body.id, platform: "vimeo" });
    const missing = await api("GET", `/v1/demo/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body.data.name).toBe("JobNotFound");
  });
});
