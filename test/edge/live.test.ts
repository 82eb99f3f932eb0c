// mode live at the edge (decision 0360), with the extractor stood in for: the options reach the
// extractor as asked, each frame's captured_at and its source are stored and served by
// GET /v1/jobs/{id} (checked against the served OpenAPI document by the api helper), the hold is
// ceil(duration / 60) and the charge the minutes watched; a stalled (failed) job is free.
import { describe, expect, it } from "vitest";
import type { ExtractRequest } from "../../schema/messages.ts";
import { api, balanceOf, createAccount } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { postResult, uploadAttempt } from "./support/pipeline.ts";
import { Visitor } from "./support/visitor.ts";

const ON_AIR = ["2026-11-28T12:00:19.900Z", "2026-11-28T12:00:21.900Z", "2026-11-28T12:00:23.900Z"];

describe("live mode at the edge", () => {
  it("stores and serves captured_at, holds the duration's minutes and charges the watched ones", async () => {
    const seen: ExtractRequest[] = [];
    const holds: number[] = [];
    const account = await createAccount({ plan: "starter" });
    setExtractor(async (request) => {
      seen.push(request);
      holds.push((await balanceOf(account.accountId))?.reserved ?? -1);
      const result = await uploadAttempt(request, { framesOk: 3, processedSeconds: 130 });
      result.frames = result.frames.map((frame, i) => ({
        ...frame,
        captured_at: ON_AIR[i],
        captured_at_source: "program_date_time" as const,
      }));
      await postResult(result, request.callback.token);
      return Response.json({ status: "completed" });
    });
    const before = await balanceOf(account.accountId);
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: "https://live.example.com/s.m3u8", mode: "live", every: 60, duration: 300 },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("completed");
    expect(seen[0].options).toMatchObject({ mode: "live", every: 60, duration: 300 });
    // Held up front: every started minute of the duration.
    expect(holds[0] - (before?.reserved ?? 0)).toBe(5);
    // Charged: 130 s watched, 3 started minutes.
    expect(created.body.credits_charged).toBe(3);
    const after = await balanceOf(account.accountId);
    expect((before?.plan ?? 0) - (after?.plan ?? 0)).toBe(3);
    expect(after?.reserved).toBe(before?.reserved);
    const read = await api("GET", `/v1/jobs/${created.body.id}`, { headers: account.auth });
    expect(read.body.frames.map((f: { captured_at: string }) => f.captured_at)).toEqual(ON_AIR);
    expect(read.body.frames[0].captured_at_source).toBe("program_date_time");
  });

  it("a live job that fails (a stalled stream) is free and releases its hold", async () => {
    const account = await createAccount({ plan: "starter" });
    setExtractor(async (request) => {
      const result = await uploadAttempt(request, {
        fail: {
          name: "DownloadFailed",
          message: "the live playlist gained no segment for 6 s",
          userMessage: "The live stream stopped advancing, so the job ended; nothing was charged.",
        },
      });
      await postResult(result, request.callback.token);
      return Response.json({ status: "completed" });
    });
    const before = await balanceOf(account.accountId);
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: "https://live.example.com/s.m3u8", mode: "live", every: 2, duration: 6 },
      headers: account.auth,
    });
    expect(created.body.status).toBe("failed");
    expect(created.body.error.name).toBe("DownloadFailed");
    expect(created.body.credits_charged ?? 0).toBe(0);
    expect(await balanceOf(account.accountId)).toEqual(before);
  });

  it("frames of other modes carry no captured_at", async () => {
    const account = await createAccount({ plan: "starter" });
    setExtractor(async (request) => {
      await postResult(await uploadAttempt(request, { framesOk: 2 }), request.callback.token);
      return Response.json({ status: "completed" });
    });
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: "https://cdn.example.com/v.mp4", count: 2 },
      headers: account.auth,
    });
    expect(created.body.frames[0]).not.toHaveProperty("captured_at");
  });

  it("has its guide at /docs/live, linked from the other guides", async () => {
    const page = await new Visitor().get("/docs/live");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 id="top">Live streams</h1>');
    expect(page.text).toContain("EXT-X-PROGRAM-DATE-TIME");
    const other = await new Visitor().get("/docs/slides");
    expect(other.text).toContain('href="/docs/live"');
  });
});
