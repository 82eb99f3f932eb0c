// Skimming a video over MCP (issue 38) against the real stack, with the SDK's own client: the
// overview's contact sheet (its tiles' pixels are the frames it reports, the times burned into
// them read back with Tesseract equal the times it reports, the captions of each span), a
// 200-frame zoom paged under its cap until every frame is seen exactly once, and every tool's
// four annotations. Each answer's cost is measured here by the documented rule (decision 0321):
// text blocks and structured content at 3 UTF-8 bytes a token, images by schema/image-tokens.ts
// at the size read from their own bytes.
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ImageTokenModel, imageTokens } from "../../schema/image-tokens.ts";
import { makeTestVideo, readImagePattern, readPattern } from "../support/videos.ts";
import { call, creditsAvailable, download, type Harness, startHarness } from "./support/harness.ts";

const run = promisify(execFile);
const FPS = 10;

let h: Harness;
let captioned: string;
let dense: string;
let talkative: string;
let wordy: string;
let mcpUrl: URL;

// Cues on the 12 s video; with 6 tiles each tile's span is 2 s ([0,2), [2,4) …).
const CUES = [
  { start: 0.5, end: 1.0, text: "First words" },
  { start: 3.5, end: 4.5, text: "Across two spans" },
  { start: 9.0, end: 9.5, text: "Near the end" },
];

// A long sentence on screen every half second: 40 tiles' words overflow a 5,000-token cap.
const CHATTER = Array.from({ length: 20 }, (_, k) => ({
  start: k * 0.5,
  end: (k + 1) * 0.5,
  text: `Sentence ${k + 1}: the quick brown fox jumps over the lazy dog, then naps in the afternoon sun.`,
}));

// Half a second each, 900 characters each: one 5-second span holds 10 of them, past 5,000 tokens.
const SPEECHES = Array.from({ length: 20 }, (_, k) => ({
  start: k * 0.5,
  end: (k + 1) * 0.5,
  text: `Speech ${k + 1}: ${"and then it went on and on ".repeat(33)}`.slice(0, 900),
}));

beforeAll(async () => {
  h = await startHarness();
  mcpUrl = new URL(`${h.stack.baseUrl}/mcp`);
  const wide = await makeTestVideo({
    width: 1280,
    height: 720,
    fps: FPS,
    durationSeconds: 12,
    gop: 10,
  });
  captioned = h.serveVideo("/media/skim-captioned.mp4", await withSubtitles(wide, CUES));
  // 300 pictures in 10 s: 200 evenly spaced frames are 200 different pictures.
  const many = await makeTestVideo({ width: 640, height: 360, fps: 30, durationSeconds: 10 });
  dense = h.serveVideo("/media/skim-dense.mp4", many);
  talkative = h.serveVideo("/media/skim-talkative.mp4", await withSubtitles(many, CHATTER));
  wordy = h.serveVideo("/media/skim-wordy.mp4", await withSubtitles(many, SPEECHES));
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** The video with a mov_text track of these cues (from an SRT written here). */
async function withSubtitles(video: string, cues: typeof CUES): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "stills-skim-"));
  const stamp = (s: number) => {
    const ms = Math.round(s * 1000);
    const pad = (n: number, w = 2) => String(n).padStart(w, "0");
    return `00:00:${pad(Math.floor(ms / 1000))},${pad(ms % 1000, 3)}`;
  };
  const srt = cues.map((c, i) => `${i + 1}\n${stamp(c.start)} --> ${stamp(c.end)}\n${c.text}\n`);
  await writeFile(join(dir, "cues.srt"), srt.join("\n"));
  const out = join(dir, "captioned.mp4");
  await run("ffmpeg", [
    ...["-v", "error", "-i", video, "-i", join(dir, "cues.srt")],
    ...["-map", "0:v", "-map", "1:s", "-c:v", "copy", "-c:s", "mov_text", out],
  ]);
  return out;
}

async function connect(auth: Record<string, string>) {
  const client = new Client({ name: "stills-skim-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: auth } }),
  );
  return client;
}

type Result = CallToolResult & { structuredContent?: any };

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 60_000,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: 180_000,
    onprogress: () => {},
  })) as Result;
}

const images = (result: Result) =>
  result.content.filter((b) => b.type === "image") as { data: string; mimeType: string }[];

/** The answer's cost by decision 0321's rule, measured from what came over the wire. */
async function measuredTokens(result: Result, model: ImageTokenModel) {
  const bytes = (text: string) => Math.ceil(Buffer.byteLength(text, "utf8") / 3);
  let text = result.structuredContent ? bytes(JSON.stringify(result.structuredContent)) : 0;
  let pictures = 0;
  for (const block of result.content) {
    if (block.type === "text") text += bytes(block.text);
    if (block.type === "image") {
      const meta = await sharp(Buffer.from(block.data, "base64")).metadata();
      pictures += imageTokens(model, { width: meta.width ?? 0, height: meta.height ?? 0 });
    }
  }
  return text + pictures;
}

/** The time burned into a tile's foot, read by Tesseract from the sheet's own pixels. */
async function burnedTime(sheet: Buffer, tile: { x: number; y: number }, w: number, th: number) {
  const band = await sharp(sheet)
    .extract({ left: tile.x, top: tile.y + th - 22, width: Math.min(w, 140), height: 22 })
    .resize({ width: Math.min(w, 140) * 4, kernel: "lanczos3" })
    .greyscale()
    .negate()
    .threshold(140)
    .extend({ top: 20, bottom: 20, left: 20, right: 20, background: "#fff" })
    .png()
    .toBuffer();
  const dir = await mkdtemp(join(tmpdir(), "stills-band-"));
  const file = join(dir, "band.png");
  await writeFile(file, band);
  const { stdout } = await run("tesseract", [
    ...[file, "stdout", "--psm", "7"],
    ...["-c", "tessedit_char_whitelist=0123456789:."],
  ]);
  return stdout.trim().replace(/\s+/g, "");
}

describe("skimming over MCP", () => {
  it("sets all four annotations on every tool, as each tool behaves", async () => {
    const { auth } = await h.newKey("starter");
    const client = await connect(auth);
    const { tools } = await client.listTools();
    const reads = {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    };
    // Starting a job fetches a stranger's link (open world) and makes a new job each call.
    const starts = {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    };
    const expected: Record<string, typeof reads> = {
      overview: starts,
      zoom: starts,
      extract_frames: starts,
      create_demo: starts,
      create_batch: starts,
      get_job: reads,
      list_jobs: reads,
      view_frames: reads,
      get_usage: reads,
      get_pricing: reads,
      get_demo: reads,
      get_batch: reads,
      list_batches: reads,
    };
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(expected).sort());
    for (const tool of tools) {
      const hints = tool.annotations ?? {};
      for (const name of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]) {
        expect(typeof (hints as Record<string, unknown>)[name], `${tool.name}.${name}`).toBe(
          "boolean",
        );
      }
      expect(hints, tool.name).toMatchObject(expected[tool.name]);
      expect(hints.title, tool.name).toBe(tool.title);
    }
    await client.close();
  });

  it("overview: one sheet whose tiles are the frames it names, times burned in, captions by span, charged as REST", async () => {
    const account = await h.newKey("starter");
    const before = await creditsAvailable(h.stack, account.auth);
    const client = await connect(account.auth);
    const result = await callTool(client, "overview", {
      url: captioned,
      tiles: 6,
      inline_images: true,
      model: "claude",
    });
    expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy();
    const overview = result.structuredContent;
    expect(await measuredTokens(result, "claude")).toBeLessThanOrEqual(15_000);
    expect(overview.budget).toEqual({ max_tokens: 15_000, model: "claude" });

    // Charged as the same job over REST: 1 started minute (6 + 1 frames included), +1 for text.
    const job = (await call(h.stack, "GET", `/jobs/${overview.job_id}`, { headers: account.auth }))
      .body;
    expect(job.options).toMatchObject({ mode: "count", count: 6, storyboard: true, text: true });
    expect(overview.credits_charged).toBe(2);
    expect(job.credits_charged).toBe(2);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 2);

    // The sheet came inline, and it is the job's storyboard image byte for byte.
    const [image] = images(result);
    expect(image.mimeType).toBe("image/jpeg");
    const sheet = Buffer.from(image.data, "base64");
    const stored = await download(job.storyboard.image_url);
    expect(sheet.equals(Buffer.from(stored.bytes))).toBe(true);
    const meta = await sharp(sheet).metadata();
    expect(overview.sheet).toMatchObject({
      columns: 5,
      rows: 2,
      tile_width: 320,
      tile_height: 180,
      width: meta.width,
      height: meta.height,
      inline: true,
      tokens: imageTokens("claude", { width: meta.width ?? 0, height: meta.height ?? 0 }),
    });
    expect(overview.tiles).toHaveLength(6);
    expect(overview.omitted).toBeNull();
    expect(overview.next_cursor).toBeNull();

    const { data, info } = await sharp(sheet).raw().toBuffer({ resolveWithObject: true });
    for (const [i, tile] of overview.tiles.entries()) {
      const frame = job.frames.find((f: any) => f.index === tile.frame_index);
      // Count mode: tile i is frame i, at (i + ½) · 12 s / 6, and the tile's time is its time.
      expect(tile.tile).toBe(i + 1);
      expect(frame.timestamp).toBeCloseTo((i + 0.5) * 2, 6);
      expect(tile.time).toBe(frame.timestamp);
      expect([tile.x, tile.y]).toEqual([(i % 5) * 320, Math.floor(i / 5) * 180]);
      // The tile's pixels show the frame on screen at that time (its number painted in it).
      const pixels = Buffer.alloc(320 * 180 * info.channels);
      for (let row = 0; row < 180; row++) {
        const from = ((tile.y + row) * info.width + tile.x) * info.channels;
        data.copy(pixels, row * 320 * info.channels, from, from + 320 * info.channels);
      }
      const shown = readPattern(pixels, 320, 180, info.channels).number;
      expect(shown, `tile ${tile.tile}`).toBe(Math.round(frame.pts * FPS));
      expect(shown).toBe((await readImagePattern((await download(frame.url)).bytes)).number);
      // The time burned into the tile, read back from the sheet, is the time reported for it.
      expect(tile.label).toMatch(/^00:00:\d{2}\.\d{3}$/);
      expect(await burnedTime(sheet, tile, 320, 180), `tile ${tile.tile}`).toBe(tile.label);
      // Its span is the count slot around it; the captions are those on screen in that span.
      expect(tile.span.start).toBeCloseTo(i * 2, 6);
      expect(tile.span.end).toBeCloseTo((i + 1) * 2, 6);
      const inSpan = CUES.filter((c) => c.start < tile.span.end && c.end > tile.span.start);
      expect(tile.captions, `tile ${tile.tile}`).toEqual(inSpan.map((c) => c.text));
      // Text was read on each tile's frame (the job's own reading of it).
      expect(tile.text).toEqual(frame.text);
    }
    // Each caption reaches the words an agent reads, quoted.
    const words = result.content
      .filter((b) => b.type === "text")
      .map((b: any) => b.text)
      .join("\n");
    for (const cue of CUES) expect(words).toContain(JSON.stringify(cue.text));
    expect(words).toContain("00:00:05.000");
    await client.close();
  });

  it("overview: the text on screen in each tile, read from the service's own sample", async () => {
    const { auth } = await h.newKey("starter");
    const client = await connect(auth);
    const sample = `${new URL(h.stack.apiUrl).origin}/samples/intro.mp4`;
    // Five 6-second scenes, each with its title drawn large: five tiles, one in each scene.
    const result = await callTool(client, "overview", { url: sample, tiles: 5 });
    expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy();
    expect(images(result)).toHaveLength(0);
    const { tiles, sheet } = result.structuredContent;
    expect(sheet).toMatchObject({ inline: false, columns: 5, rows: 1 });
    expect((await download(sheet.url)).type).toBe("image/jpeg");
    const words = result.content.map((b: any) => b.text ?? "").join("\n");
    const titles = ["Stills", "Count", "Interval", "Scenes", "Keyframes"];
    expect(tiles.map((t: any) => t.label)).toEqual(
      ["03", "09", "15", "21", "27"].map((s) => `00:00:${s}.000`),
    );
    for (const [i, tile] of tiles.entries()) {
      expect(tile.text.content.toLowerCase(), `tile ${tile.tile}`).toContain(
        titles[i].toLowerCase(),
      );
      expect(words).toContain(JSON.stringify(tile.text.content));
    }
    await client.close();
  });

  it("overview: tiles that do not fit the cap are named, and the cursor brings each exactly once", async () => {
    const { auth } = await h.newKey("starter");
    const client = await connect(auth);
    const cap = 5_000;
    let result = await callTool(client, "overview", {
      url: talkative,
      tiles: 40,
      text: false,
      max_tokens: cap,
    });
    expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy();
    const total = result.structuredContent.total_tiles;
    expect(total).toBeGreaterThan(10);
    const seen: number[] = [];
    let pages = 0;
    for (;;) {
      pages++;
      const page = result.structuredContent;
      expect(await measuredTokens(result, "generic")).toBeLessThanOrEqual(cap);
      expect(page.tiles.length).toBeGreaterThan(0);
      seen.push(...page.tiles.map((t: any) => t.tile));
      for (const tile of page.tiles) {
        const inSpan = CHATTER.filter((c) => c.start < tile.span.end && c.end > tile.span.start);
        expect(tile.captions, `tile ${tile.tile}`).toEqual(inSpan.map((c) => c.text));
      }
      const rest = Array.from({ length: total - seen.length }, (_, i) => seen.length + i + 1);
      if (page.next_cursor === null) {
        expect(page.omitted).toBeNull();
        break;
      }
      // What was left out is named: exactly the tiles not yet seen, as one range.
      expect(page.omitted.tiles).toEqual([{ from: rest[0], to: rest[rest.length - 1] }]);
      const named = result.content.find((b) => b.type === "text") as { text: string };
      expect(named.text).toContain(`tiles ${rest[0]}–${rest[rest.length - 1]}`);
      expect(named.text).toContain(page.next_cursor);
      result = await callTool(client, "overview", { cursor: page.next_cursor, max_tokens: cap });
      expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy();
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    await client.close();
  });

  it("overview: a tile whose captions alone pass the cap keeps as many as fit and counts the rest", async () => {
    const { auth } = await h.newKey("starter");
    const client = await connect(auth);
    const cap = 5_000;
    let result = await callTool(client, "overview", {
      url: wordy,
      tiles: 2,
      text: false,
      max_tokens: cap,
    });
    const seen: number[] = [];
    for (;;) {
      expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy();
      expect(await measuredTokens(result, "generic")).toBeLessThanOrEqual(cap);
      const page = result.structuredContent;
      expect(page.tiles).toHaveLength(1);
      const [tile] = page.tiles;
      seen.push(tile.tile);
      const inSpan = SPEECHES.filter((c) => c.start < tile.span.end && c.end > tile.span.start);
      expect(inSpan).toHaveLength(10);
      // The first captions of the span, in order, and the count of those left out.
      expect(tile.captions.length).toBeGreaterThan(0);
      expect(tile.captions).toEqual(inSpan.slice(0, tile.captions.length).map((c) => c.text));
      expect(tile.words_left_out).toEqual({ captions: 10 - tile.captions.length, text: false });
      const words = result.content.map((b: any) => b.text ?? "").join("\n");
      expect(words).toContain(`${10 - tile.captions.length} more caption(s)`);
      if (!page.next_cursor) break;
      result = await callTool(client, "overview", { cursor: page.next_cursor, max_tokens: cap });
    }
    expect(seen).toEqual([1, 2]);
    await client.close();
  });

  it("zoom: a 200-frame job paged under the cap, each frame exactly once, the images the frames", async () => {
    const account = await h.newKey("starter");
    const client = await connect(account.auth);
    const cap = 8_000;
    let result = await callTool(client, "zoom", {
      url: dense,
      start: 0,
      end: 10,
      count: 200,
      inline_images: true,
      limit: 20,
      max_tokens: cap,
      model: "claude",
    });
    expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy();
    const jobId = result.structuredContent.job_id;
    // A count job of 200 frames over 10 s: 1 started minute + 1 per further 100 frames.
    expect(result.structuredContent.credits_charged).toBe(2);
    const seen: number[] = [];
    for (;;) {
      const page = result.structuredContent;
      expect(page.job_id).toBe(jobId);
      expect(page.total_frames).toBe(200);
      expect(await measuredTokens(result, "claude")).toBeLessThanOrEqual(cap);
      const pictures = images(result);
      expect(pictures).toHaveLength(page.frames.length);
      expect(page.frames.length).toBeGreaterThan(0);
      for (const [i, frame] of page.frames.entries()) {
        const bytes = Buffer.from(pictures[i].data, "base64");
        const meta = await sharp(bytes).metadata();
        expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(
          page.image_long_side,
        );
        expect(frame.shown).toMatchObject({ width: meta.width, height: meta.height });
        // The picture is the frame on screen at its time.
        expect((await readImagePattern(bytes)).number, `frame ${frame.index}`).toBe(
          Math.round(frame.pts * 30),
        );
      }
      seen.push(...page.frames.map((f: any) => f.index));
      if (page.next_cursor === null) {
        expect(page.omitted).toBeNull();
        break;
      }
      expect(page.omitted.frames).toEqual([{ from: seen.length + 1, to: 200 }]);
      result = await callTool(client, "zoom", {
        cursor: page.next_cursor,
        inline_images: true,
        limit: 20,
        max_tokens: cap,
        model: "claude",
      });
      expect(result.isError, JSON.stringify(result.content[0])).toBeFalsy();
    }
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));

    // By URL (no inline images), the same job pages by its text alone, still under the cap.
    let linked = await callTool(client, "zoom", {
      cursor: btoa(`zoom:${jobId}/0`).replace(/=+$/, ""),
      max_tokens: 5_000,
    });
    const byUrl: number[] = [];
    for (;;) {
      expect(linked.isError, JSON.stringify(linked.content[0])).toBeFalsy();
      expect(images(linked)).toHaveLength(0);
      expect(await measuredTokens(linked, "generic")).toBeLessThanOrEqual(5_000);
      for (const frame of linked.structuredContent.frames) {
        expect([frame.width, frame.height]).toEqual([640, 360]);
        expect(frame.tokens).toBe(imageTokens("generic", { width: 640, height: 360 }));
        expect(frame.url).toMatch(/^http/);
      }
      byUrl.push(...linked.structuredContent.frames.map((f: any) => f.index));
      if (!linked.structuredContent.next_cursor) break;
      linked = await callTool(client, "zoom", {
        cursor: linked.structuredContent.next_cursor,
        max_tokens: 5_000,
      });
    }
    expect(byUrl).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    // get_job on the same job: its 200 signed URLs would pass the cap, so the answer keeps the
    // first frames that fit, names the rest, and its cursor pages them with zoom.
    const read = await callTool(client, "get_job", { job_id: jobId });
    expect(read.isError, JSON.stringify(read.content[0])).toBeFalsy();
    expect(await measuredTokens(read, "generic")).toBeLessThanOrEqual(15_000);
    const kept = read.structuredContent.frames.length;
    expect(kept).toBeGreaterThan(10);
    expect(kept).toBeLessThan(200);
    expect(read.structuredContent.frames_count).toBe(200);
    expect(read.structuredContent.frames_omitted.frames).toEqual([{ from: kept + 1, to: 200 }]);
    const readText = (read.content[0] as { text: string }).text;
    expect(readText).toContain(`frames ${kept + 1}–200`);
    const rest = await callTool(client, "zoom", { cursor: read.structuredContent.next_cursor });
    expect(rest.structuredContent.frames[0].index).toBe(kept + 1);

    // Paging is free: only the job was charged.
    const usage = await call(h.stack, "GET", "/usage", { headers: account.auth });
    expect(usage.body.this_period.credits_charged).toBe(2);
    await client.close();
  });

  it("refuses what it cannot do in the spec's error shape", async () => {
    const { auth } = await h.newKey("starter");
    const client = await connect(auth);
    const both = await callTool(client, "zoom", { url: dense, job_id: crypto.randomUUID() });
    expect(both.isError).toBe(true);
    expect(both.structuredContent.data.name).toBe("InvalidRequest");
    const overviewCursor = btoa(`overview:${crypto.randomUUID()}/3`).replace(/=+$/, "");
    const wrong = await callTool(client, "zoom", { cursor: overviewCursor });
    expect(wrong.structuredContent.data.name).toBe("InvalidRequest");
    const tooSmall = await callTool(client, "overview", { url: dense, max_tokens: 100 });
    expect(tooSmall.structuredContent.data.name).toBe("InvalidRequest");
    expect(tooSmall.structuredContent.data.errors?.[0]?.field ?? "max_tokens").toContain(
      "max_tokens",
    );
    // Nothing was started by a refused call.
    const listed = await call(h.stack, "GET", "/jobs", { headers: auth });
    expect(listed.body.total).toBe(0);
    await client.close();
  });
});
