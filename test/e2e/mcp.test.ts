// The MCP server against the real stack (wrangler dev + extractor), driven by the SDK's own
// client over Streamable HTTP and by the MCP Inspector's CLI: the tools, their errors, the
// credentials REST accepts and refuses, credits charged exactly as REST charges, and frames
// returned as images within their size and count limits, paged to the end.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey } from "../../schema/api-keys.ts";
import { ROOT } from "../../scripts/lib/stack.mjs";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import {
  call,
  download,
  type Harness,
  startHarness,
  startReceiver,
  verifyStandardWebhook,
} from "./support/harness.ts";

const run = promisify(execFile);
const FPS = 10;

let h: Harness;
let wideVideo: string;
let wideFile: string;
let mcpUrl: URL;

beforeAll(async () => {
  h = await startHarness();
  mcpUrl = new URL(`${h.stack.baseUrl}/mcp`);
  // 1280×720: every frame must be scaled down to become a 512 px preview.
  wideFile = await makeTestVideo({
    width: 1280,
    height: 720,
    fps: FPS,
    durationSeconds: 12,
    gop: 10,
  });
  wideVideo = h.serveVideo("/media/wide.mp4", wideFile);
});

afterAll(async () => {
  await h?.close();
});

async function connect(headers: Record<string, string>) {
  const client = new Client({ name: "stills-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }));
  return client;
}

type Result = CallToolResult & { structuredContent?: any };

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  // The server reports progress while a job runs; a busy machine may need the whole wait.
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 60_000,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: 150_000,
    onprogress: () => {},
  })) as Result;
}

function images(result: Result) {
  return result.content.filter((block) => block.type === "image") as {
    data: string;
    mimeType: string;
  }[];
}

function texts(result: Result) {
  return result.content.filter((block) => block.type === "text").map((b) => (b as any).text);
}

/** Width and height read from the JPEG itself, and the frame number its pattern shows. */
async function inspectImage(image: { data: string; mimeType: string }) {
  const bytes = Buffer.from(image.data, "base64");
  const meta = await sharp(bytes).metadata();
  const { number } = await readImagePattern(bytes);
  expect(number, "the frame number drawn in the picture").not.toBeNull();
  return { format: meta.format, width: meta.width, height: meta.height, frame: number as number };
}

describe("the MCP server", () => {
  it("initializes and lists every tool with its schema and annotations", async () => {
    const { auth } = await h.newKey("starter");
    const client = await connect(auth);
    expect(client.getServerVersion()?.name).toBe("stills");
    expect(client.getInstructions()).toContain("extract_frames");
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual(
      [
        "create_batch",
        "create_demo",
        "extract_frames",
        "get_batch",
        "get_demo",
        "get_job",
        "get_pricing",
        "get_usage",
        "list_batches",
        "list_jobs",
        "overview",
        "view_frames",
        "zoom",
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
    }
    const extract = byName.extract_frames.inputSchema as any;
    // The REST body's constraints, from schema/api.ts, not restated here.
    expect(extract.required).toEqual(["url"]);
    expect(extract.properties.timestamps.maxItems).toBe(500);
    expect(extract.properties.every).toMatchObject({ minimum: 0.1, maximum: 3600 });
    expect(extract.properties.idempotency_key.maxLength).toBe(255);
    expect(extract.properties.wait).toBeUndefined();
    expect(extract.additionalProperties).toBe(false);
    expect((byName.list_jobs.inputSchema as any).properties.limit.maximum).toBe(100);
    expect((byName.view_frames.inputSchema as any).properties.limit.maximum).toBe(8);
    expect(byName.extract_frames.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: true,
    });
    expect(byName.create_batch.annotations).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true,
    });
    for (const name of [
      "get_job",
      "list_jobs",
      "view_frames",
      "get_usage",
      "get_pricing",
      "get_batch",
      "list_batches",
    ]) {
      expect(byName[name].annotations, name).toMatchObject({
        readOnlyHint: true,
        idempotentHint: true,
      });
    }
    await client.close();
  });

  it("extracts frames, charges exactly what REST charges, and shows the frames as images", async () => {
    const viaRest = await h.newKey("starter");
    const viaMcp = await h.newKey("starter");
    const request = { url: wideVideo, count: 12, resolution: "720" };

    const rest = await call(h.stack, "POST", "/jobs?wait=true", {
      body: request,
      headers: viaRest.auth,
    });
    expect(rest.status).toBe(201);
    expect(rest.body.status).toBe("completed");

    const client = await connect(viaMcp.auth);
    const extracted = await callTool(client, "extract_frames", { ...request, images: true });
    expect(extracted.isError).toBeFalsy();
    const job = extracted.structuredContent.job;
    expect(job.status).toBe("completed");
    expect(job.frames_count).toBe(12);
    expect(job.credits_charged).toBe(rest.body.credits_charged);
    expect(job.credits_charged).toBeGreaterThan(0);
    expect(texts(extracted)[0]).toContain(`Job ${job.id} completed`);
    // What the video is comes with the frames, in the data and in the words an agent reads.
    expect(job.video).toMatchObject({
      width: 1280,
      height: 720,
      frame_rate: FPS,
      has_audio: false,
    });
    expect(job.video.duration_seconds).toBeCloseTo(12, 1);
    expect(texts(extracted)[0]).toContain(`${job.video.duration_seconds} s, 1280×720, ${FPS} fps`);
    expect(extracted.structuredContent.images.video).toEqual(job.video);

    // The job is an ordinary job: REST lists it and reads it the same.
    const listed = await call(h.stack, "GET", "/jobs", { headers: viaMcp.auth });
    expect(listed.body.data.map((j: any) => j.id)).toEqual([job.id]);
    const read = await call(h.stack, "GET", `/jobs/${job.id}`, { headers: viaMcp.auth });
    expect(read.body.credits_charged).toBe(job.credits_charged);

    // Both accounts started alike and paid alike.
    const [usageRest, usageMcp] = await Promise.all(
      [viaRest, viaMcp].map((a) => call(h.stack, "GET", "/usage", { headers: a.auth })),
    );
    expect(usageMcp.body.credits).toEqual(usageRest.body.credits);
    expect(usageMcp.body.this_period.credits_charged).toBe(job.credits_charged);

    // The first page: 8 images, each at most 512 px, of frames 1–8 in order.
    const firstPage = images(extracted);
    expect(firstPage).toHaveLength(8);
    const seen: number[] = [];
    for (const [i, image] of firstPage.entries()) {
      expect(image.mimeType).toBe("image/jpeg");
      const looked = await inspectImage(image);
      expect(looked.format).toBe("jpeg");
      expect([looked.width, looked.height]).toEqual([512, 288]);
      // Each preview shows the very frame the job delivered at that index.
      const full = await download(job.frames[i].url);
      expect(looked.frame).toBe((await readImagePattern(full.bytes)).number);
      seen.push(looked.frame);
    }
    const page = extracted.structuredContent.images;
    expect(page.frames.map((f: any) => f.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(page.frames.every((f: any) => f.shown && f.width === 512)).toBe(true);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect(
      texts(extracted).some((t) => t.includes(`Frame 1 of 12 at ${job.frames[0].timestamp} s`)),
    ).toBe(true);

    // Paging to the end: 3 more, then the last 1, then no cursor.
    const second = await callTool(client, "view_frames", {
      job_id: job.id,
      cursor: page.next_cursor,
      limit: 3,
    });
    expect(second.structuredContent.frames.map((f: any) => f.index)).toEqual([9, 10, 11]);
    expect(images(second)).toHaveLength(3);
    const last = await callTool(client, "view_frames", {
      job_id: job.id,
      cursor: second.structuredContent.next_cursor,
    });
    expect(last.structuredContent.frames.map((f: any) => f.index)).toEqual([12]);
    expect(last.structuredContent.next_cursor).toBeNull();
    for (const image of [...images(second), ...images(last)]) {
      const looked = await inspectImage(image);
      expect(Math.max(looked.width ?? 0, looked.height ?? 0)).toBeLessThanOrEqual(512);
      seen.push(looked.frame);
    }
    // Twelve different moments, in time order: every frame was shown once.
    expect(seen).toHaveLength(12);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    expect(new Set(seen).size).toBe(12);

    // A second look is served from the stored previews, byte for byte the same.
    const again = await callTool(client, "view_frames", { job_id: job.id, limit: 2 });
    expect(images(again).map((i) => i.data)).toEqual(firstPage.slice(0, 2).map((i) => i.data));
    await client.close();
  });

  it("runs a batch as REST does: one job per link, the same charges, a link that is no video failed and free", async () => {
    const viaRest = await h.newKey("starter");
    const viaMcp = await h.newKey("starter");
    const links = (owner: string) => [
      h.serveVideo(`/media/${owner}-batch-1.mp4`, wideFile),
      "ftp://example.com/not-a-video.mp4",
      h.serveVideo(`/media/${owner}-batch-2.mp4`, wideFile),
    ];
    const options = { count: 3, resolution: "360" };

    const rest = await call(h.stack, "POST", "/batches", {
      body: { urls: links("rest"), ...options },
      headers: viaRest.auth,
    });
    expect(rest.status).toBe(201);
    const client = await connect(viaMcp.auth);
    const created = await callTool(client, "create_batch", {
      urls: links("mcp"),
      ...options,
      idempotency_key: "mcp-batch-1",
    });
    expect(created.isError, texts(created)[0]).toBeFalsy();
    const batchId = created.structuredContent.id;
    expect(created.structuredContent.object).toBe("batch");
    expect(created.structuredContent.items.total).toBe(3);
    expect(texts(created)[0]).toContain(`Batch ${batchId} created`);
    expect(texts(created)[0]).toContain(`get_batch with batch_id "${batchId}"`);
    // The same call again is the same batch, not a second one.
    const again = await callTool(client, "create_batch", {
      urls: links("mcp"),
      ...options,
      idempotency_key: "mcp-batch-1",
    });
    expect(again.structuredContent.id).toBe(batchId);

    const settle = async (read: () => Promise<any>) => {
      const deadline = Date.now() + 90_000;
      for (;;) {
        const batch = await read();
        if (batch.status === "completed") return batch;
        if (Date.now() > deadline) throw new Error(`batch still ${batch.status}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    };
    const viaTool = await settle(
      async () => (await callTool(client, "get_batch", { batch_id: batchId })).structuredContent,
    );
    const viaApi = await settle(
      async () =>
        (await call(h.stack, "GET", `/batches/${rest.body.id}`, { headers: viaRest.auth })).body,
    );
    for (const batch of [viaTool, viaApi]) {
      expect(batch.counts).toMatchObject({ total: 3, completed: 2, failed: 1, pending: 0 });
      expect(batch.items.data.map((item: any) => item.status)).toEqual([
        "completed",
        "failed",
        "completed",
      ]);
      expect(batch.items.data[1]).toMatchObject({ job_id: null, error: { name: "InvalidUrl" } });
    }
    expect(viaTool.credits_charged).toBe(viaApi.credits_charged);
    expect(viaTool.credits_charged).toBeGreaterThan(0);
    expect(viaTool.options).toEqual(viaApi.options);

    // Each item's job is an ordinary job of the account: its frames are there, and the
    // account paid exactly the items' charges, as the REST account did.
    for (const item of [viaTool.items.data[0], viaTool.items.data[2]]) {
      const job = await callTool(client, "get_job", { job_id: item.job_id });
      expect(job.structuredContent.status).toBe("completed");
      expect(job.structuredContent.frames).toHaveLength(3);
      const frame = await download(job.structuredContent.frames[0].url);
      expect(frame.status).toBe(200);
      expect((await sharp(frame.bytes).metadata()).height).toBe(360);
    }
    const [usageRest, usageMcp] = await Promise.all(
      [viaRest, viaMcp].map((a) => call(h.stack, "GET", "/usage", { headers: a.auth })),
    );
    expect(usageMcp.body.credits).toEqual(usageRest.body.credits);
    expect(usageMcp.body.this_period.credits_charged).toBe(viaTool.credits_charged);

    // Paged items name what is left and how to read it; the list shows the one batch.
    const firstItem = await callTool(client, "get_batch", { batch_id: batchId, limit: 1 });
    expect(firstItem.structuredContent.items).toMatchObject({ total: 3, limit: 1, skip: 0 });
    expect(firstItem.structuredContent.items.data.map((i: any) => i.index)).toEqual([1]);
    const listed = await callTool(client, "list_batches", {});
    expect(listed.structuredContent.data.map((b: any) => b.id)).toEqual([batchId]);
    expect(texts(listed)[0]).toContain(`${batchId} completed: 2 completed, 1 failed of 3`);

    // Refusals are REST's, as tool errors: the same body but the request's id.
    const bothBody = { urls: [links("mcp")[0]], url: links("mcp")[2], count: 2 };
    const both = await callTool(client, "create_batch", bothBody);
    const restBoth = await call(h.stack, "POST", "/batches", {
      body: bothBody,
      headers: viaMcp.auth,
    });
    expect(restBoth.status).toBe(400);
    expect(both.isError).toBe(true);
    const withoutRequest = (body: any) => ({ ...body, data: { ...body.data, request_id: null } });
    expect(withoutRequest(both.structuredContent)).toEqual(withoutRequest(restBoth.body));
    expect(texts(both).join("\n")).toContain("not both");
    const stranger = await callTool(client, "get_batch", { batch_id: rest.body.id });
    expect(stranger.isError).toBe(true);
    expect(stranger.structuredContent.code).toBe(404);
    await client.close();
  });

  it("sends the same signed webhook for a job made through MCP", async () => {
    const account = await h.newKey("starter");
    const receiver = await startReceiver();
    try {
      const client = await connect(account.auth);
      const made = await callTool(client, "extract_frames", {
        url: wideVideo,
        timestamps: [2],
        resolution: "240",
        webhook_url: receiver.url,
      });
      const job = made.structuredContent.job;
      expect(job.status).toBe("completed");
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(receiver.received).toHaveLength(1);
      const [hook] = receiver.received;
      expect(verifyStandardWebhook(await h.webhookSecret(account.email), hook)).toBe(true);
      const event = JSON.parse(hook.body);
      expect(event.type).toBe("job.completed");
      expect(event.data.id).toBe(job.id);
      expect(event.data.credits_charged).toBe(job.credits_charged);
      await client.close();
    } finally {
      await receiver.close();
    }
  });

  it("answers a missing, malformed, unknown or revoked key exactly as REST does", async () => {
    const { key } = await h.newKey("starter");
    const revoked = await h.newKey("starter");
    await h.execute(
      `UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00Z' WHERE account_id = (SELECT id FROM accounts WHERE email = '${revoked.email}')`,
    );
    const cases: Record<string, Record<string, string>> = {
      missing: {},
      malformed: { authorization: "Basic dXNlcjpwYXNz" },
      "not our prefix": { authorization: "Bearer sk_live_1234567890" },
      unknown: { authorization: `Bearer ${generateApiKey()}` },
      "bad checksum": { "x-api-key": `${key.slice(0, -1)}${key.endsWith("0") ? "1" : "0"}` },
      revoked: revoked.auth,
    };
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    };
    for (const [label, headers] of Object.entries(cases)) {
      const viaRest = await call(h.stack, "GET", "/usage", { headers });
      const viaMcp = await fetch(mcpUrl, {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(initialize),
      });
      expect(viaMcp.status, label).toBe(401);
      expect(viaRest.status, label).toBe(401);
      // The same body, each naming its own request.
      const mcpBody = (await viaMcp.json()) as any;
      expect(mcpBody.data.request_id, label).toBe(viaMcp.headers.get("x-request-id"));
      expect(viaRest.body.data.request_id, label).toBe(viaRest.headers.get("x-request-id"));
      const withoutRequest = (body: any) => ({ ...body, data: { ...body.data, request_id: null } });
      expect(withoutRequest(mcpBody), label).toEqual(withoutRequest(viaRest.body));
      // Where an OAuth-only client starts signing in.
      expect(viaMcp.headers.get("www-authenticate"), label).toContain(
        `resource_metadata="${h.stack.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(viaMcp.headers.get("x-ratelimit-limit"), label).toBe("60");
    }
    // The SDK's client sees the refusal as an HTTP 401.
    const refused = await connect(cases.unknown).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
  });

  it("counts MCP requests in the key's REST rate limit", async () => {
    const account = await h.newKey("free");
    const before = await call(h.stack, "GET", "/usage", { headers: account.auth });
    const remaining = Number(before.headers.get("x-ratelimit-remaining"));
    expect(before.headers.get("x-ratelimit-limit")).toBe("30");
    const viaMcp = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        ...account.auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(viaMcp.status).toBe(200);
    await viaMcp.text();
    expect(Number(viaMcp.headers.get("x-ratelimit-remaining"))).toBe(remaining - 1);
    const after = await call(h.stack, "GET", "/usage", { headers: account.auth });
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBe(remaining - 2);
  });

  it("reads jobs, usage and pricing exactly as REST does", async () => {
    const account = await h.newKey("starter");
    const client = await connect(account.auth);
    const created = await callTool(client, "extract_frames", {
      url: wideVideo,
      timestamps: [1, 2.5],
      resolution: "240",
      idempotency_key: "mcp-e2e-read",
    });
    const job = created.structuredContent.job;
    expect(created.structuredContent.images).toBeNull();
    // The same key and arguments return the first job: nothing is created or charged twice.
    const replay = await callTool(client, "extract_frames", {
      url: wideVideo,
      timestamps: [1, 2.5],
      resolution: "240",
      idempotency_key: "mcp-e2e-read",
    });
    expect(replay.structuredContent.job.id).toBe(job.id);

    const got = await callTool(client, "get_job", { job_id: job.id });
    const rest = await call(h.stack, "GET", `/jobs/${job.id}`, { headers: account.auth });
    expect({ ...got.structuredContent, frames: [] }).toEqual({ ...rest.body, frames: [] });
    expect(got.structuredContent.frames.map((f: any) => f.timestamp)).toEqual([1, 2.5]);

    const listed = await callTool(client, "list_jobs", { limit: 5 });
    const restList = await call(h.stack, "GET", "/jobs?limit=5", { headers: account.auth });
    expect(listed.structuredContent).toEqual(restList.body);
    expect(listed.structuredContent.total).toBe(1);
    expect(texts(listed)[0]).toContain(job.id);

    const usage = await callTool(client, "get_usage");
    const restUsage = await call(h.stack, "GET", "/usage", { headers: account.auth });
    expect(usage.structuredContent).toEqual(restUsage.body);
    expect(texts(usage)[0]).toContain(`${restUsage.body.credits.available} credits available`);

    const pricing = await callTool(client, "get_pricing");
    const restPricing = await call(h.stack, "GET", "/pricing");
    expect(pricing.structuredContent).toEqual(restPricing.body);
    expect(texts(pricing)[0]).toContain("starter $19/month");
    // Every credit rule is in the text a model reads first, a repeat's 0 credits among them.
    const rules = Object.entries(restPricing.body.credit_rules as Record<string, string>);
    expect(rules.length).toBeGreaterThan(10);
    for (const [name, rule] of rules) {
      expect(texts(pricing)[0], name).toContain(`${name.replaceAll("_", " ")}: ${rule}`);
    }
    expect(texts(pricing)[0]).toContain(
      "repeats: a repeat of your own job within retention costs 0 credits",
    );

    // A small job's frames (426 or 427 × 240) are their own previews, byte for byte.
    const small = await callTool(client, "view_frames", { job_id: job.id });
    expect(images(small)).toHaveLength(2);
    for (const [i, image] of images(small).entries()) {
      const delivered = await download(got.structuredContent.frames[i].url);
      expect(Buffer.from(image.data, "base64").equals(Buffer.from(delivered.bytes))).toBe(true);
      const looked = await inspectImage(image);
      expect(looked.height).toBe(240);
      expect(looked.frame).toBe([1, 2.5][i] * FPS);
    }

    // A job delivered as a ZIP alone has no single frames to show, and says so.
    const zipped = await callTool(client, "extract_frames", {
      url: wideVideo,
      count: 2,
      resolution: "240",
      output: "zip",
      images: true,
    });
    expect(zipped.structuredContent.job.zip_url).toEqual(expect.any(String));
    expect(images(zipped)).toHaveLength(0);
    expect(zipped.structuredContent.images.frames).toEqual([
      expect.objectContaining({
        index: 1,
        shown: false,
        note: "delivered only inside the job's ZIP",
      }),
      expect.objectContaining({
        index: 2,
        shown: false,
        note: "delivered only inside the job's ZIP",
      }),
    ]);
    await client.close();
  });

  it("runs the demo and shows its frames", async () => {
    const account = await h.newKey("free");
    const client = await connect(account.auth);
    const created = await callTool(client, "create_demo", { url: wideVideo });
    expect(created.isError).toBeFalsy();
    const demoId = created.structuredContent.id;
    expect(created.structuredContent.object).toBe("demo_job");
    let demo = created;
    // Every 2.5 s for a minute: a free key reads 30 times a minute, and a demo waits for the
    // demo slots every demo from 127.0.0.1 shares on a busy stack.
    for (let i = 0; i < 24 && demo.structuredContent.status !== "completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      demo = await callTool(client, "get_demo", { demo_id: demoId });
    }
    expect(demo.structuredContent.status).toBe("completed");
    const restDemo = await call(h.stack, "GET", `/demo/${demoId}`);
    expect({ ...demo.structuredContent, frames: [] }).toEqual({ ...restDemo.body, frames: [] });
    const viewed = await callTool(client, "view_frames", { job_id: demoId });
    expect(viewed.structuredContent.next_cursor).toBeNull();
    const looked = await Promise.all(images(viewed).map(inspectImage));
    expect(looked).toHaveLength(6);
    // The demo's frames are 640 px wide: their previews are scaled to 512.
    for (const image of looked) expect([image.width, image.height]).toEqual([512, 288]);
    // Demos are free.
    const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
    expect(usage.body.credits.available).toBe(60);
    await client.close();
  });

  it("returns errors as tool errors an agent can tell apart", async () => {
    const account = await h.newKey("free");
    const client = await connect(account.auth);
    const expectToolError = (result: Result, name: string) => {
      expect(result.isError, name).toBe(true);
      expect(result.structuredContent.data.name).toBe(name);
      expect(result.structuredContent.data.userMessage).toEqual(expect.any(String));
      expect(texts(result)[0]).toContain(`${name}: ${result.structuredContent.data.userMessage}`);
      return result.structuredContent;
    };

    // The same refusals REST gives for the same bodies.
    const both = { url: wideVideo, count: 2, timestamps: [1] };
    const restBoth = await call(h.stack, "POST", "/jobs", { body: both, headers: account.auth });
    const mcpBoth = expectToolError(
      await callTool(client, "extract_frames", both),
      "InvalidRequest",
    );
    // Each answer names its own request; everything else is the same body.
    const withoutRequest = (body: any) => ({ ...body, data: { ...body.data, request_id: null } });
    expect(withoutRequest(mcpBoth)).toEqual(withoutRequest(restBoth.body));
    expect(mcpBoth.data.request_id).not.toBe(restBoth.body.data.request_id);
    expect(restBoth.body.data.request_id).toBe(restBoth.headers.get("X-Request-Id"));
    expectToolError(await callTool(client, "extract_frames", { url: "not a link" }), "InvalidUrl");
    expectToolError(
      await callTool(client, "extract_frames", { url: wideVideo, fromat: "png" }),
      "InvalidRequest",
    );
    expectToolError(
      await callTool(client, "extract_frames", { url: wideVideo, count: 2, resolution: "1080" }),
      "ResolutionNotAllowed",
    );

    // A private video: the job fails, costs nothing, and the error names why.
    h.videos.route("/media/private.mp4", (_req, res) => res.writeHead(403).end("login first"));
    const privateJob = await callTool(client, "extract_frames", {
      url: `${h.videos.origin}/media/private.mp4`,
      count: 2,
      end: 10,
    });
    const failure = expectToolError(privateJob, "PrivateContent");
    expect(failure.job.status).toBe("failed");
    expect(failure.job.credits_charged).toBe(0);

    // Out of credits: spend them all, and the job is refused with the REST error.
    await h.execute(`UPDATE accounts SET plan_credits = 0 WHERE email = '${account.email}'`);
    const broke = expectToolError(
      await callTool(client, "extract_frames", { url: wideVideo, count: 2 }),
      "InsufficientBalance",
    );
    expect(broke.code).toBe(402);

    const missing = crypto.randomUUID();
    expectToolError(await callTool(client, "get_job", { job_id: missing }), "JobNotFound");
    expectToolError(await callTool(client, "view_frames", { job_id: missing }), "JobNotFound");
    expectToolError(
      await callTool(client, "view_frames", { job_id: failure.job.id }),
      "InvalidRequest",
    );
    expectToolError(
      await callTool(client, "view_frames", { job_id: failure.job.id, limit: 9 }),
      "InvalidRequest",
    );
    await client.close();
  });

  it("refuses a cursor of another job", async () => {
    const account = await h.newKey("starter");
    const client = await connect(account.auth);
    const first = await callTool(client, "extract_frames", {
      url: wideVideo,
      count: 3,
      resolution: "240",
    });
    const second = await callTool(client, "extract_frames", {
      url: wideVideo,
      count: 3,
      resolution: "240",
    });
    const page = await callTool(client, "view_frames", {
      job_id: first.structuredContent.job.id,
      limit: 1,
    });
    const cursor = page.structuredContent.next_cursor;
    const crossed = await callTool(client, "view_frames", {
      job_id: second.structuredContent.job.id,
      cursor,
    });
    expect(crossed.isError).toBe(true);
    expect(crossed.structuredContent.data.name).toBe("InvalidRequest");
    const forged = await callTool(client, "view_frames", {
      job_id: first.structuredContent.job.id,
      cursor: "not-a-cursor",
    });
    expect(forged.structuredContent.data.name).toBe("InvalidRequest");
    await client.close();
  });

  it("lists its tools to the MCP Inspector's CLI, with the key as a header", async () => {
    const { key } = await h.newKey("starter");
    const inspector = join(ROOT, "node_modules/.bin/mcp-inspector");
    const { stdout, stderr } = await run(
      inspector,
      [
        "--cli",
        mcpUrl.href,
        "--transport",
        "http",
        "--method",
        "tools/list",
        "--header",
        `Authorization: Bearer ${key}`,
        "--strict",
      ],
      { env: { ...process.env, HOME: process.env.HOME ?? "/tmp" }, timeout: 60_000 },
    );
    const listed = JSON.parse(stdout);
    expect(listed.tools.map((t: any) => t.name)).toContain("view_frames");
    expect(listed.tools).toHaveLength(13);
    // --strict reports tool-schema portability problems; there are none, not even warnings.
    expect(stderr).not.toMatch(/warning|error/i);
  });
});
