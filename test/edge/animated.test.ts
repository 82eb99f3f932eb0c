// Issue 39 at the edge, with the extractor stood in for: the MCP create_demo tool hands the
// demo's moving preview to the extractor (defaults filled in) and names the preview's URL once
// made; extract_frames' summary gives best frames' scores and the preview's URL; a job's hold
// and charge count the preview's credit.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accountIdFor } from "../../schema/accounts.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { ANIMATED_CREDITS } from "../../schema/plans.ts";
import { api, createAccount, freshIp, ORIGIN } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { internal, postResult, uploadAttempt } from "./support/pipeline.ts";
import { Visitor } from "./support/visitor.ts";

async function callTool(headers: Record<string, string>, name: string, args: unknown) {
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
      params: { name, arguments: args },
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

/** A stand-in extractor that stores a preview file and reports it, best scores on the frames. */
function extractorWithPreview(seen: ExtractRequest[]) {
  setExtractor(async (request) => {
    seen.push(request);
    const result = await uploadAttempt(request, { framesOk: 2, processedSeconds: 6 });
    const token = request.callback.token;
    const animated = request.options.animated;
    if (animated) {
      const key = `${request.kind}/${request.job_id}/${result.attempt_id}/preview.${animated.format}`;
      const put = await internal(`/internal/files/${key}`, {
        method: "PUT",
        body: new Uint8Array([0x52, 0x49, 0x46, 0x46]),
        headers: { "content-type": `image/${animated.format}` },
      });
      if (!put.ok) throw new Error(`preview upload: ${put.status}`);
      result.animated = {
        key,
        bytes: 4,
        frames: 30,
        width: 480,
        height: 270,
        format: animated.format,
        start: animated.start ?? 1.5,
        duration: 3,
        fps: 10,
      };
    }
    if (request.options.mode === "best") {
      const parts = {
        sharpness: 0.9,
        exposure: 1,
        contrast: 0.8,
        colourfulness: 0.7,
        interest: 0.6,
      };
      result.frames[0] = { ...result.frames[0], score: 0.82, score_parts: parts };
      result.frames[1] = { ...result.frames[1], score: 0.51, score_parts: parts };
    }
    await postResult(result, token);
    return Response.json({ status: "completed" });
  });
}

describe("best and animated at the edge", () => {
  it("create_demo hands the preview to the extractor with its defaults, and names its URL", async () => {
    const seen: ExtractRequest[] = [];
    extractorWithPreview(seen);
    // MCP always takes the caller's key; the demo itself stays free.
    const { auth } = await createAccount({ plan: "free" });
    const created = await callTool(auth, "create_demo", {
      url: "https://cdn.example.com/talk.mp4",
      animated: { start: 2, format: "gif" },
    });
    expect(created.isError).toBeFalsy();
    const id = created.structuredContent.id;
    expect(seen[0].options.animated).toEqual({
      start: 2,
      duration: 3,
      fps: 10,
      width: 480,
      format: "gif",
    });
    let read = await callTool(auth, "get_demo", { demo_id: id });
    for (let i = 0; i < 50 && read.structuredContent.status !== "completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      read = await callTool(auth, "get_demo", { demo_id: id });
    }
    expect(read.structuredContent.status).toBe("completed");
    expect(read.structuredContent.animated).toMatchObject({ frames: 30, format: "gif" });
    expect(read.structuredContent.animated.url).toMatch(/preview\.gif/);
    expect(read.content[0].text).toContain(read.structuredContent.animated.url);
  });

  it("extract_frames: best frames' scores and the preview's URL in the summary, 1 credit more", async () => {
    const seen: ExtractRequest[] = [];
    extractorWithPreview(seen);
    const { auth } = await createAccount({ plan: "starter" });
    const result = await callTool(auth, "extract_frames", {
      url: "https://cdn.example.com/talk.mp4",
      mode: "best",
      count: 2,
      animated: {},
    });
    const job = result.structuredContent.job;
    expect(job.status).toBe("completed");
    expect(job.frames.map((f: { score: number }) => f.score)).toEqual([0.82, 0.51]);
    expect(job.frames[0].score_parts).toMatchObject({ sharpness: 0.9 });
    const text: string = result.content[0].text;
    expect(text).toContain("0.82, 0.51");
    expect(text).toContain(job.animated.url);
    // 2 best frames: 1 credit (like scenes); the preview: ANIMATED_CREDITS more.
    expect(job.credits_charged).toBe(1 + ANIMATED_CREDITS);
  });
});

/** Signs a new visitor in with the code the local outbox holds, and makes a key on the dashboard. */
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
  const made = await visitor.post("/dashboard/keys", { name: "best" });
  const shown = await visitor.get(made.headers.get("location") ?? "");
  const key = /stills_live_[0-9A-Za-z]{38}/.exec(shown.text)?.[0] ?? "";
  expect(key).not.toBe("");
  return { visitor, key, accountId: await accountIdFor(email) };
}

describe("the job page", () => {
  it("shows best frames with their scores, best first, and the preview playing as an <img>", async () => {
    extractorWithPreview([]);
    const { visitor, key } = await signedInWithKey();
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: "https://cdn.example.com/talk.mp4", mode: "best", count: 2, animated: {} },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(created.body.status).toBe("completed");
    const page = await visitor.get(`/dashboard/jobs/${created.body.id}`);
    expect(page.status).toBe(200);
    const html = page.text;
    expect(html).toContain("Best frames");
    const rows = [...html.matchAll(/<td data-label="Score"><strong>([0-9.]+)<\/strong>/g)];
    expect(rows.map((m) => m[1])).toEqual(["0.82", "0.51"]);
    expect(html).toContain('<td data-label="Sharpness">0.90</td>');
    const img =
      /<img src="([^"]+preview\.webp[^"]*)" alt="Moving preview[^"]*" width="480" height="270"/.exec(
        html,
      );
    expect(img).not.toBeNull();
    const served = await exports.default.fetch((img?.[1] ?? "").replaceAll("&amp;", "&"));
    expect(served.status).toBe(200);
    expect(html).toContain("WebP, 30 pictures at 10 fps, 3 s from 1.5 s, 480×270");
    // The dashboard's CSP: no inline script or style came with it.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle="/);
  });
});
