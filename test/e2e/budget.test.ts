// A token budget over HTTP on the real stack (issue 38, decision 0311): the extractor picks the
// frames and their width once it has probed, job.budget says what it chose, and the frames
// delivered, downloaded and measured on their actual pixel size by the family's published
// rule (schema/image-tokens.ts), fit the budget. REST, the webhook and MCP carry it.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ImageTokenModel, imageTokens } from "../../schema/image-tokens.ts";
import { makeTestVideo, readPattern } from "../support/videos.ts";
import {
  call,
  creditsAvailable,
  type Harness,
  startHarness,
  startReceiver,
} from "./support/harness.ts";
import { downloadPixels } from "./support/pixels.ts";

let h: Harness;
let wideUrl: string;
let tallUrl: string;
let account: Awaited<ReturnType<Harness["newKey"]>>;

beforeAll(async () => {
  h = await startHarness();
  const [wide, tall] = await Promise.all([
    makeTestVideo({ width: 1280, height: 720, fps: 10, durationSeconds: 30, gop: 10 }),
    makeTestVideo({ width: 360, height: 640, fps: 10, durationSeconds: 10, gop: 10 }),
  ]);
  wideUrl = h.serveVideo("/media/budget-wide.mp4", wide);
  tallUrl = h.serveVideo("/media/budget-tall.mp4", tall);
  account = await h.newKey("starter");
}, 180_000);

afterAll(async () => {
  await h?.close();
});

interface BudgetedJob {
  status: string;
  frames_count: number;
  frames: { status: string; url: string; timestamp: number }[];
  budget: {
    tokens: number;
    model: ImageTokenModel;
    tokens_estimated: number;
    per_frame: number;
    frames: number;
    width: number;
    height: number;
  };
}

/**
 * Downloads every frame and measures it: each frame's tokens by the family's rule on the size
 * read from its bytes, their sum within the budget, and job.budget saying exactly that.
 */
async function expectFramesFit(job: BudgetedJob, tokens: number, model: ImageTokenModel) {
  expect(job.status).toBe("completed");
  expect(job.budget).toMatchObject({ tokens, model });
  let measured = 0;
  for (const frame of job.frames) {
    expect(frame.status).toBe("ok");
    const picture = await downloadPixels(frame.url);
    expect([picture.width, picture.height]).toEqual([job.budget.width, job.budget.height]);
    // The picture is the source's frame at its time (its painted frame number reads).
    const pattern = readPattern(picture.data, picture.width, picture.height, 3);
    expect(pattern.number, `frame at ${frame.timestamp}`).toBe(
      Math.floor(frame.timestamp * 10 + 1e-6),
    );
    measured += imageTokens(model, { width: picture.width, height: picture.height });
  }
  expect(measured).toBeLessThanOrEqual(tokens);
  expect(job.budget.tokens_estimated).toBe(measured);
  expect(job.budget.tokens_estimated).toBeLessThanOrEqual(tokens);
  expect(job.budget.frames).toBe(job.frames.length);
  expect(job.frames_count).toBe(job.frames.length);
  expect(job.budget.per_frame * job.budget.frames).toBe(job.budget.tokens_estimated);
  return measured;
}

describe("budget over HTTP", { timeout: 180_000 }, () => {
  it("4000 tokens for claude: 15 frames of 30 s, as wide as 15 allow, fitting by the rule", async () => {
    const before = await creditsAvailable(h.stack, account.auth);
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: wideUrl, budget: { tokens: 4000, model: "claude" } },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const job = res.body as BudgetedJob;
    expect(job.status, JSON.stringify(res.body.error)).toBe("completed");
    // At most one frame per 2 s of the span, and 15 legible frames fit 4000 tokens.
    expect(job.frames).toHaveLength(15);
    const measured = await expectFramesFit(job, 4000, "claude");
    // Spent, not wasted: one pixel wider and the 15 frames would not fit.
    const wider = imageTokens("claude", {
      width: job.budget.width + 1,
      height: Math.round((720 * (job.budget.width + 1)) / 1280),
    });
    expect(15 * wider).toBeGreaterThan(4000);
    expect(measured).toBeGreaterThan(3900);
    // Charged as count mode: one started minute.
    expect(res.body.credits_charged).toBe(1);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 1);
    // Read back: the same budget, from D1.
    const read = await call(h.stack, "GET", `/jobs/${res.body.id}`, { headers: account.auth });
    expect(read.body.budget).toEqual(job.budget);
  });

  it("a portrait video for gpt, in the webhook too", async () => {
    const receiver = await startReceiver();
    try {
      const res = await call(h.stack, "POST", "/jobs?wait=true", {
        body: { url: tallUrl, budget: { tokens: 1500, model: "gpt" }, webhook_url: receiver.url },
        headers: account.auth,
      });
      expect(res.status).toBe(201);
      const job = res.body as BudgetedJob;
      await expectFramesFit(job, 1500, "gpt");
      // 255 tokens a frame (one 512-px tile) until the frame is 512 px tall: 5 frames.
      expect(job.budget).toMatchObject({ per_frame: 255, frames: 5, height: 512, width: 288 });
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(receiver.received).toHaveLength(1);
      const event = JSON.parse(receiver.received[0].body);
      expect(event.type).toBe("job.completed");
      expect(event.data.budget).toEqual(job.budget);
    } finally {
      await receiver.close();
    }
  });

  it("keyframes mode under a gemini budget: the budget caps the count and sets the width", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: wideUrl, mode: "keyframes", budget: { tokens: 1100, model: "gemini" } },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const job = res.body as BudgetedJob;
    expect(job.status, JSON.stringify(res.body.error)).toBe("completed");
    // 258 a frame up to one 768-px tile: 4 frames, 768 wide.
    expect(job.budget).toMatchObject({ per_frame: 258, frames: 4, width: 768, height: 432 });
    expect(job.budget.tokens_estimated).toBeLessThanOrEqual(1100);
  });

  it("refuses bad budgets with the spec's error body, naming each problem", async () => {
    const res = await call(h.stack, "POST", "/jobs", {
      body: { url: wideUrl, count: 4, budget: { tokens: -1, model: "llava" } },
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      name: "BadRequest",
      code: 400,
      className: "bad-request",
      data: { name: "InvalidRequest" },
    });
    const params = res.body.data.errors.map((problem: { param: string }) => problem.param);
    expect(params.sort()).toEqual(["budget.model", "budget.tokens", "count"]);
  });
});

describe("the budgets guide", { timeout: 180_000 }, () => {
  it("its example job, run on the sample, answers the budget the guide prints", async () => {
    const guide = readFileSync(
      resolve(import.meta.dirname, "../../docs/guides/budgets.md"),
      "utf8",
    );
    const request = guide.match(/-d '(\{"url"[^']*\})'/)?.[1];
    const printed = guide.match(/```json\n"budget": (\{[\s\S]*?\})\n```/)?.[1];
    expect(request && printed).toBeTruthy();
    const body = JSON.parse(
      (request as string).replaceAll("{PUBLIC_BASE_URL}", new URL(h.stack.apiUrl).origin),
    );
    const res = await call(h.stack, "POST", "/jobs?wait=true", { body, headers: account.auth });
    expect(res.body.status, JSON.stringify(res.body.error)).toBe("completed");
    expect(res.body.budget).toEqual(JSON.parse(printed as string));
  });
});

describe("budget through MCP", { timeout: 180_000 }, () => {
  it("extract_frames takes a budget and its job says what it chose", async () => {
    const key = await h.newKey("starter");
    const client = new Client({ name: "stills-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${h.stack.baseUrl}/mcp`), {
        requestInit: { headers: key.auth },
      }),
    );
    try {
      const result = (await client.callTool(
        {
          name: "extract_frames",
          arguments: { url: wideUrl, budget: { tokens: 2000, model: "generic" } },
        },
        undefined,
        { timeout: 150_000 },
      )) as { isError?: boolean; structuredContent?: { job: BudgetedJob } };
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      const job = result.structuredContent?.job as BudgetedJob;
      await expectFramesFit(job, 2000, "generic");
    } finally {
      await client.close();
    }
  });
});
