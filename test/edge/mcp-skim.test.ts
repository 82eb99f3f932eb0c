// The skimming tools' rules as data (decisions 0320, 0321): which tile shows which frames, at
// what burned time and over which span; our WebVTT read back; what an answer costs by the
// counting rule; the cursors; the names of what was left out.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { cappedRows } from "../../edge/mcp/capped-job.ts";
import { toBase64 } from "../../edge/mcp/jpeg.ts";
import { previewKeyOf, previewSizeOf } from "../../edge/mcp/previews.ts";
import {
  decodeSkimCursor,
  encodeSkimCursor,
  indexRanges,
  mostThatFit,
  rangesText,
  responseTokens,
  textTokens,
} from "../../edge/mcp/response-budget.ts";
import { cuesIn, readOurWebVtt, sheetTiles, tileLabel } from "../../edge/mcp/skim-tiles.ts";
import { imageTokens } from "../../schema/image-tokens.ts";

const board = { columns: 5, tile_width: 320, tile_height: 180 };

function frame(index: number, timestamp: number, pts: number | null, extra = {}) {
  return {
    index,
    timestamp,
    pts,
    status: "ok" as const,
    url: `https://stills.test/f/${index}`,
    error: null,
    ...extra,
  };
}

/** A JPEG header the size reader accepts: SOI, then a baseline frame segment of this size. */
function jpegOf(width: number, height: number): string {
  return toBase64(
    new Uint8Array([
      0xff,
      0xd8,
      0xff,
      0xc0,
      0x00,
      0x11,
      0x08,
      height >> 8,
      height & 0xff,
      width >> 8,
      width & 0xff,
      0x03,
      0x01,
      0x22,
      0x00,
      0x02,
      0x11,
      0x01,
      0x03,
      0x11,
      0x01,
      0xff,
      0xd9,
    ]),
  );
}

describe("overview tiles", () => {
  it("one tile per picture, in time order, at the frame's moment, with the count slots as spans", () => {
    const frames = [
      frame(1, 1, 1),
      frame(2, 3, 2.9),
      frame(3, 5, 2.9), // the same decoded picture as frame 2: one tile
      frame(4, 7, 6.9, { moved_to: 7.4 }),
      { ...frame(5, 9, null), status: "error" as const, url: null, error: "past the end" },
      frame(6, 11, 10.9),
    ];
    const tiles = sheetTiles(frames, board, { start: 0, end: 12 });
    expect(tiles.map((t) => t.frames.map((f) => f.index))).toEqual([[1], [2, 3], [4], [6]]);
    expect(tiles.map((t) => t.time)).toEqual([1, 3, 7.4, 11]);
    expect(tiles.map((t) => t.label)).toEqual([
      "00:00:01.000",
      "00:00:03.000",
      "00:00:07.400",
      "00:00:11.000",
    ]);
    expect(tiles.map((t) => t.span)).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 5.2 },
      { start: 5.2, end: 9.2 },
      { start: 9.2, end: 12 },
    ]);
  });

  it("lays tiles out five to a row, as the sheet does", () => {
    const frames = Array.from({ length: 7 }, (_, i) => frame(i + 1, i + 0.5, i + 0.5));
    const tiles = sheetTiles(frames, board, { start: 0, end: 7 });
    expect(tiles.map((t) => [t.x, t.y])).toEqual([
      [0, 0],
      [320, 0],
      [640, 0],
      [960, 0],
      [1280, 0],
      [0, 180],
      [320, 180],
    ]);
  });

  it("writes hours, minutes, seconds and milliseconds as the sheet does", () => {
    expect(tileLabel(0)).toBe("00:00:00.000");
    expect(tileLabel(3725.0456)).toBe("01:02:05.046");
  });

  it("reads our WebVTT back, escapes undone, and finds each cue on screen in a span", () => {
    const vtt =
      "WEBVTT\nLanguage: en\n\n00:00:00.500 --> 00:00:01.500\nFish &amp; chips\nfor two\n\n" +
      "00:00:03.000 --> 00:00:04.250\n&lt;b&gt; stays text\n";
    const cues = readOurWebVtt(vtt);
    expect(cues).toEqual([
      { start: 0.5, end: 1.5, text: "Fish & chips\nfor two" },
      { start: 3, end: 4.25, text: "<b> stays text" },
    ]);
    expect(cuesIn(cues, { start: 0, end: 0.5 })).toEqual([]);
    expect(cuesIn(cues, { start: 1.4, end: 3.01 })).toEqual([
      "Fish & chips\nfor two",
      "<b> stays text",
    ]);
    expect(cuesIn(cues, { start: 4.25, end: 9 })).toEqual([]);
  });
});

describe("the counting rule", () => {
  it("counts text at 3 UTF-8 bytes a token, the structured content too, and images by their family's rule", () => {
    expect(textTokens("abc")).toBe(1);
    expect(textTokens("abcd")).toBe(2);
    expect(textTokens("日本")).toBe(2); // 6 bytes
    const result: CallToolResult = {
      content: [
        { type: "text", text: "x".repeat(300) },
        { type: "image", data: jpegOf(512, 288), mimeType: "image/jpeg" },
        { type: "image", data: jpegOf(1600, 720), mimeType: "image/jpeg" },
      ],
      structuredContent: { a: "y".repeat(290) },
    };
    const json = JSON.stringify(result.structuredContent).length;
    for (const model of ["claude", "gpt", "gemini", "generic"] as const) {
      const images =
        imageTokens(model, { width: 512, height: 288 }) +
        imageTokens(model, { width: 1600, height: 720 });
      expect(responseTokens(result, model)).toEqual({
        text: 100 + Math.ceil(json / 3),
        images,
        total: 100 + Math.ceil(json / 3) + images,
      });
    }
    // Claude's rule, by hand: 512×288/750 and 1600×720 read at 1568×705.
    expect(responseTokens(result, "claude").images).toBe(197 + Math.ceil((1568 * 705) / 750));
  });

  it("finds the most items that fit, by halves", () => {
    expect(mostThatFit(200, (n) => n * 37 <= 5000)).toBe(135);
    expect(mostThatFit(10, () => true)).toBe(10);
    expect(mostThatFit(10, (n) => n === 0)).toBe(0);
  });

  it("names what was left out as ranges", () => {
    const ranges = indexRanges([9, 3, 4, 5, 7, 8, 12]);
    expect(ranges).toEqual([
      { from: 3, to: 5 },
      { from: 7, to: 9 },
      { from: 12, to: 12 },
    ]);
    expect(rangesText(ranges)).toBe("3–5, 7–9, 12");
  });

  it("gives each tool cursors of its own", () => {
    const job = "0b7c5d2e-1111-4222-8333-944455556666";
    const cursor = encodeSkimCursor("zoom", job, 40);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeSkimCursor("zoom", cursor)).toEqual({ jobId: job, offset: 40 });
    expect(decodeSkimCursor("overview", cursor)).toBeNull();
    expect(decodeSkimCursor("zoom", "not a cursor!")).toBeNull();
    expect(decodeSkimCursor("zoom", btoa(`zoom:${job}/-1`))).toBeNull();
  });
});

describe("list_jobs under the cap", () => {
  it("keeps the rows that fit and names the rest with the skip that lists them", () => {
    const rows = Array.from({ length: 100 }, (_, i) => ({ id: i, url: "u".repeat(1500) }));
    const render = (shown: typeof rows, note: string): CallToolResult => ({
      content: [{ type: "text", text: `rows${note}` }],
      structuredContent: { data: shown },
    });
    const answer = cappedRows(rows, 40, render);
    const kept = (answer.structuredContent as { data: unknown[] }).data.length;
    expect(responseTokens(answer, "generic").total).toBeLessThanOrEqual(15_000);
    // One row more would not fit.
    expect(responseTokens(render(rows.slice(0, kept + 1), ""), "generic").total).toBeGreaterThan(
      15_000,
    );
    const text = (answer.content[0] as { text: string }).text;
    expect(text).toContain(`jobs ${40 + kept + 1}–140; call list_jobs with skip ${40 + kept}`);
    const few = cappedRows(rows.slice(0, 3), 0, render);
    expect((few.content[0] as { text: string }).text).toBe("rows");
  });
});

describe("zoom's preview sizes", () => {
  it("scales down to the long side, never up, and keeps the 512 px preview's old name", () => {
    expect(previewSizeOf({ width: 1280, height: 720 }, 384)).toEqual({ width: 384, height: 216 });
    expect(previewSizeOf({ width: 720, height: 1280 }, 1024)).toEqual({ width: 576, height: 1024 });
    expect(previewSizeOf({ width: 640, height: 360 }, 1024)).toEqual({ width: 640, height: 360 });
    const key = "job/0b7c5d2e-1111-4222-8333-944455556666/att-1/frame-0007.png";
    expect(previewKeyOf(key)).toBe(
      "job/0b7c5d2e-1111-4222-8333-944455556666/att-1/preview-frame-0007.jpg",
    );
    expect(previewKeyOf(key, 256)).toBe(
      "job/0b7c5d2e-1111-4222-8333-944455556666/att-1/preview-256-frame-0007.jpg",
    );
  });
});
