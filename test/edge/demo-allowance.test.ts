// The demo's daily allowance per address: the answer to POST /v1/demo says what is left, and a
// preview that fails gives its use back (once, however often its settlement is retried), so
// only previews that complete count.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { giveBackDemoPreview } from "../../edge/jobs/demo-allowance.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { api, freshIp } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { runFakeExtraction } from "./support/pipeline.ts";

const LIMIT = Number(env.STILLS_DEMO_DAILY_LIMIT);
const PRIVATE = {
  name: "PrivateContent" as const,
  message: "the source answered 403",
  userMessage: "This video is private.",
};

function nextUtcMidnight(): string {
  const now = new Date();
  return new Date(
    Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1),
  ).toISOString();
}

/** The stand-in extractor ends every demo it is sent as `outcome`. */
function extractorThat(outcome: "fails" | "completes") {
  setExtractor(async (request: ExtractRequest) => {
    await runFakeExtraction(request, outcome === "fails" ? { fail: PRIVATE } : { framesOk: 6 });
    return Response.json({ status: outcome === "fails" ? "failed" : "completed" });
  });
}

async function previewEnding(ip: string, status: "failed" | "completed") {
  const created = await api("POST", "/v1/demo", {
    ip,
    body: { url: "https://cdn.example.com/clips/a.mp4" },
  });
  expect(created.status).toBe(201);
  await vi.waitFor(
    async () => expect((await api("GET", `/v1/demo/${created.body.id}`)).body.status).toBe(status),
    { timeout: 10_000, interval: 100 },
  );
  return created.body;
}

describe("the demo's daily allowance", () => {
  it("is in the answer to POST /v1/demo: the limit, what is left after this preview, the next UTC midnight", async () => {
    const ip = freshIp();
    const first = await api("POST", "/v1/demo", {
      ip,
      body: { url: "https://cdn.example.com/clips/a.mp4" },
    });
    expect(first.status).toBe(201);
    expect(first.body.allowance).toEqual({
      limit: LIMIT,
      remaining: LIMIT - 1,
      resets_at: nextUtcMidnight(),
    });
    const second = await api("POST", "/v1/demo", {
      ip,
      body: { url: "https://cdn.example.com/clips/a.mp4" },
    });
    expect(second.body.allowance.remaining).toBe(LIMIT - 2);
    // Reading a demo is not creating one: no allowance there.
    expect((await api("GET", `/v1/demo/${first.body.id}`)).body).not.toHaveProperty("allowance");
  });

  it("gives a failed preview back, so more previews than the limit may fail and none is refused", async () => {
    const ip = freshIp();
    extractorThat("fails");
    for (let i = 0; i < LIMIT + 2; i++) {
      const demo = await previewEnding(ip, "failed");
      // Each one took the use the previous failure gave back.
      expect(demo.allowance.remaining).toBe(LIMIT - 1);
    }
  });

  it("counts completed previews, and gives a failure back only once", async () => {
    const ip = freshIp();
    extractorThat("completes");
    const done = await previewEnding(ip, "completed");
    expect(done.allowance.remaining).toBe(LIMIT - 1);
    extractorThat("fails");
    const failed = await previewEnding(ip, "failed");
    expect(failed.allowance.remaining).toBe(LIMIT - 2);
    // A settlement retried after it was written gives nothing again.
    await giveBackDemoPreview(env, failed.id);
    await giveBackDemoPreview(env, failed.id);
    extractorThat("completes");
    const next = await previewEnding(ip, "completed");
    expect(next.allowance.remaining).toBe(LIMIT - 2);
  });
});
