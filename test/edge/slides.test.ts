// slides mode at the edge (issue 38, decision 0300), with the extractor stood in for: the mode
// reaches the extractor as asked; each frame's slide {start, end, repeat_of} is stored and
// served by GET /v1/jobs/{id} (checked against the served OpenAPI document by the api helper);
// jobs of other modes carry no slide; the charge is like scenes (1 credit per 10 frames); the
// job page lists the slides with their spans and the repeat; MCP's extract_frames takes the
// mode and returns the slides; bad combinations are refused.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ExtractRequest } from "../../schema/messages.ts";
import { api, createAccount, freshIp, ORIGIN } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { internal, postResult, uploadAttempt } from "./support/pipeline.ts";
import { Visitor } from "./support/visitor.ts";

const SLIDE_SPANS = [
  { start: 0, end: 4.76, repeat_of: null },
  { start: 5.04, end: 10.08, repeat_of: null },
  { start: 20.44, end: 23.24, repeat_of: 1 },
];

// SOI, APP0, SOF0 of a 512×288 JPEG: a preview MCP measures and shows as it is (mcp.test.ts).
const JPEG_HEAD = new Uint8Array([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x20, 0x02,
  0x00, 0x03, 0x01, 0x22, 0x00,
]);

function extractorWithSlides(seen: ExtractRequest[]) {
  setExtractor(async (request) => {
    seen.push(request);
    const result = await uploadAttempt(request, { framesOk: 3, processedSeconds: 35 });
    for (const frame of result.frames) {
      const put = await internal(
        `/internal/files/${frame.key}`,
        { method: "PUT", body: JPEG_HEAD },
        request.callback.token,
      );
      if (!put.ok) throw new Error(`frame upload: ${put.status}`);
    }
    if (request.options.mode === "slides") {
      result.frames = result.frames.map((frame, i) => ({ ...frame, slide: SLIDE_SPANS[i] }));
    }
    await postResult(result, request.callback.token);
    return Response.json({ status: "completed" });
  });
}

async function extractFramesTool(headers: Record<string, string>, args: unknown) {
  const response = await exports.default.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      "cf-connecting-ip": freshIp(),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "extract_frames", arguments: args },
    }),
  });
  const text = await response.text();
  const data = response.headers.get("content-type")?.includes("text/event-stream")
    ? (text.split("\n").find((line) => line.startsWith("data: ")) ?? "").slice(6)
    : text;
  const message = JSON.parse(data);
  if (!message.result) throw new Error(JSON.stringify(message));
  return message.result;
}

async function signedInWithKey() {
  const email = `${crypto.randomUUID()}@example.com`;
  const visitor = new Visitor();
  expect((await visitor.post("/sign-in", { email })).status).toBe(303);
  const mail = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
  )
    .bind(email)
    .first<{ code: string }>();
  expect((await visitor.post("/sign-in/code", { email, code: mail?.code ?? "" })).status).toBe(303);
  const made = await visitor.post("/dashboard/keys", { name: "slides" });
  const shown = await visitor.get(made.headers.get("location") ?? "");
  const key = /stills_live_[0-9A-Za-z]{38}/.exec(shown.text)?.[0] ?? "";
  expect(key).not.toBe("");
  return { visitor, key };
}

describe("slides mode at the edge", () => {
  it("stores and serves each frame's slide, charges like scenes, and shows them on the job page", async () => {
    const seen: ExtractRequest[] = [];
    extractorWithSlides(seen);
    const { visitor, key } = await signedInWithKey();
    const auth = { authorization: `Bearer ${key}` };
    const before = (await api("GET", "/v1/usage", { headers: auth })).body;
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: "https://cdn.example.com/deck.mp4", mode: "slides", count: 5 },
      headers: auth,
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("completed");
    expect(seen[0].options).toMatchObject({ mode: "slides", count: 5 });
    expect(created.body.credits_charged).toBe(1);
    const after = (await api("GET", "/v1/usage", { headers: auth })).body;
    expect(before.credits.available - after.credits.available).toBe(1);

    const read = await api("GET", `/v1/jobs/${created.body.id}`, { headers: auth });
    expect(read.body.frames.map((f: { slide: unknown }) => f.slide)).toEqual(SLIDE_SPANS);

    const page = await visitor.get(`/dashboard/jobs/${created.body.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2 id="slides-title">Slides</h2>');
    expect(page.text).toContain('<td data-label="On screen">20.44 s to 23.24 s</td>');
    expect(page.text).toContain('<td data-label="Shown again">repeats #1</td>');
    expect(page.text).toContain("slides (One frame per slide shown)");
  });

  it("MCP's extract_frames takes mode slides and returns each frame's slide", async () => {
    const seen: ExtractRequest[] = [];
    extractorWithSlides(seen);
    const { auth } = await createAccount({ plan: "starter" });
    const result = await extractFramesTool(auth, {
      url: "https://cdn.example.com/deck.mp4",
      mode: "slides",
      images: true,
    });
    expect(seen[0].options.mode).toBe("slides");
    const job = result.structuredContent.job;
    expect(job.status).toBe("completed");
    expect(job.frames.map((f: { slide: unknown }) => f.slide)).toEqual(SLIDE_SPANS);
    expect(job.credits_charged).toBe(1);
    // What an agent reads beside each picture.
    const texts = result.content.filter((c: any) => c.type === "text").map((c: any) => c.text);
    expect(texts).toContain("Frame 1 of 3 at 0.5 s, slide on screen from 0 s to 4.76 s:");
    expect(texts).toContain(
      "Frame 3 of 3 at 2.5 s, slide on screen from 20.44 s to 23.24 s, the slide of frame 1 shown again:",
    );
    expect(result.structuredContent.images.frames[2].slide).toEqual(SLIDE_SPANS[2]);
  });

  it("leaves frames of other modes without a slide", async () => {
    extractorWithSlides([]);
    const account = await createAccount({ plan: "starter" });
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: "https://cdn.example.com/deck.mp4", mode: "scenes" },
      headers: account.auth,
    });
    expect(created.body.status).toBe("completed");
    for (const frame of created.body.frames) expect(frame).not.toHaveProperty("slide");
  });

  it("refuses every, timestamps, skip and sensitivity with slides, naming each", async () => {
    const account = await createAccount({ plan: "starter" });
    for (const [extra, param] of [
      [{ every: 2 }, "every"],
      [{ timestamps: [1] }, "timestamps"],
      [{ skip: ["duplicate"] }, "skip"],
      [{ sensitivity: 0.4 }, "sensitivity"],
    ] as const) {
      const res = await api("POST", "/v1/jobs", {
        body: { url: "https://cdn.example.com/deck.mp4", mode: "slides", ...extra },
        headers: account.auth,
      });
      expect(res.status).toBe(400);
      expect(res.body.data.errors.map((e: { param: string }) => e.param)).toContain(param);
    }
  });
});
