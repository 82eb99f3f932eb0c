// The storyboard: a contact sheet and a WebVTT thumbnail track whose cues cover the video
// without gaps and whose #xywh fragments cut the sprite exactly at each frame's tile. The VTT
// is parsed here by its own small reader, not by the code that wrote it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { unzipSync } from "fflate";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { framesWithTiles } from "../../extractor/storyboard/contact-sheet.ts";
import { thumbnailTrack, vttTime } from "../../extractor/storyboard/thumbnail-track.ts";
import { frameBytes, makeLavfiClip, meanAbsoluteDifference, rgbPixels, runJob } from "./helpers.ts";

interface Cue {
  start: number;
  end: number;
  file: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

function seconds(stamp: string): number {
  const [h, m, s] = stamp.split(":");
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
}

function parseThumbnailVtt(text: string): Cue[] {
  expect(text.startsWith("WEBVTT")).toBe(true);
  const cues: Cue[] = [];
  for (const block of text.split(/\n\n+/).slice(1)) {
    const lines = block.trim().split("\n");
    const timing = lines.findIndex((l) => l.includes("-->"));
    if (timing < 0) continue;
    const [from, to] = lines[timing].split("-->").map((s) => s.trim());
    const target = /^([^#]+)#xywh=(\d+),(\d+),(\d+),(\d+)$/.exec(lines[timing + 1] ?? "");
    if (!target) throw new Error(`cue without an #xywh target: ${block}`);
    cues.push({
      start: seconds(from),
      end: seconds(to),
      file: target[1],
      x: Number(target[2]),
      y: Number(target[3]),
      w: Number(target[4]),
      h: Number(target[5]),
    });
  }
  return cues;
}

async function crop(image: Buffer, cue: { x: number; y: number; w: number; h: number }) {
  return sharp(image)
    .extract({ left: cue.x, top: cue.y, width: cue.w, height: cue.h })
    .removeAlpha()
    .raw()
    .toBuffer();
}

function clip(): Promise<string> {
  return makeLavfiClip(
    "storyboard",
    ["testsrc2=s=640x360:r=25:d=4", "mandelbrot=s=640x360:r=25,trim=duration=3.3"],
    "[0][1]concat=n=2:v=1,format=yuv420p[v]",
  );
}

describe("storyboard", () => {
  it("cues cover the video without gaps and cut the sprite at each frame", async () => {
    const video = await clip();
    const run = await runJob(video, {
      mode: "count",
      count: 7,
      format: "png",
      storyboard: true,
      output: "both",
    });
    expect(run.outcome.status).toBe("completed");
    const board = run.outcome.storyboard;
    if (!board) throw new Error("no storyboard");
    expect(board).toMatchObject({ columns: 5, rows: 2, tile_width: 320, tile_height: 180 });

    const vtt = await readFile(join(run.directory, board.vtt_key), "utf8");
    const cues = parseThumbnailVtt(vtt);
    expect(cues).toHaveLength(7);
    expect(cues[0].start).toBe(0);
    cues.slice(1).forEach((cue, i) => {
      expect(cue.start).toBe(cues[i].end);
    });
    expect(cues[cues.length - 1].end).toBeCloseTo(run.outcome.duration_seconds ?? 0, 3);

    const sprite = await readFile(join(run.directory, board.sprite_key));
    const spriteSize = await sharp(sprite).metadata();
    expect([spriteSize.width, spriteSize.height]).toEqual([5 * 320, 2 * 180]);
    for (const [i, cue] of cues.entries()) {
      expect(cue.file).toBe("sprite.jpg");
      if (i > 0) expect(cue.start).toBeCloseTo(run.outcome.frames[i].timestamp, 3);
      const tile = await crop(sprite, cue);
      const frame = await rgbPixels(await frameBytes(run, i + 1));
      const expected = await sharp(frame.data, { raw: { width: 640, height: 360, channels: 3 } })
        .resize(320, 180, { fit: "fill" })
        .raw()
        .toBuffer();
      // JPEG twice over (tile, sprite) on mandelbrot's fine detail: close, not identical…
      const own = meanAbsoluteDifference(tile, expected);
      expect(own).toBeLessThan(10);
      // …and far closer than its neighbour's tile: the cut is where the cue says.
      const other = cues[(i + 1) % cues.length];
      expect(meanAbsoluteDifference(await crop(sprite, other), expected)).toBeGreaterThan(2 * own);
    }

    // The contact sheet: the same grid, each tile with its time written across its foot.
    const sheet = await readFile(join(run.directory, board.image_key));
    const first = cues[0];
    const picture = { ...first, h: first.h - 30 };
    const foot = { ...first, y: first.y + first.h - 22, h: 22 };
    expect(
      meanAbsoluteDifference(await crop(sheet, picture), await crop(sprite, picture)),
    ).toBeLessThan(4);
    expect(
      meanAbsoluteDifference(await crop(sheet, foot), await crop(sprite, foot)),
    ).toBeGreaterThan(20);

    const entries = unzipSync(await readFile(join(run.directory, "frames.zip")));
    expect(Object.keys(entries)).toEqual(
      expect.arrayContaining(["storyboard.jpg", "sprite.jpg", "thumbnails.vtt"]),
    );
    expect(Buffer.from(entries["thumbnails.vtt"]).toString("utf8")).toBe(vtt);
  });

  it("with skip, a tile shows the moment the frame was moved to", async () => {
    const video = await makeLavfiClip(
      "storyboard-fade",
      ["testsrc2=s=320x180:r=25:d=4"],
      "[0]fade=in:st=0:d=1,format=yuv420p[v]",
    );
    const run = await runJob(video, {
      mode: "timestamps",
      timestamps: [0, 2],
      storyboard: true,
      skip: ["black"],
    });
    const board = run.outcome.storyboard;
    if (!board) throw new Error("no storyboard");
    const cues = parseThumbnailVtt(await readFile(join(run.directory, board.vtt_key), "utf8"));
    expect(cues.map((c) => [c.start, c.end])).toEqual([
      [0, 2],
      [2, 4],
    ]);
    const sprite = await readFile(join(run.directory, board.sprite_key));
    const tile = await crop(sprite, cues[0]);
    const frame = await rgbPixels(await frameBytes(run, 1));
    expect(meanAbsoluteDifference(tile, frame.data)).toBeLessThan(6);
    expect(run.outcome.frames[0].moved_reason).toBe("black");
  });
});

describe("the thumbnail track rule, as data", () => {
  const grid = { columns: 2, tileWidth: 160, tileHeight: 90 };

  it("from 0 to the end without gaps; a repeated moment keeps its first tile", () => {
    const cues = parseThumbnailVtt(thumbnailTrack([0.5, 3, 3, 7.25], 10, grid));
    expect(cues.map((c) => [c.start, c.end, c.x, c.y])).toEqual([
      [0, 3, 0, 0],
      [3, 7.25, 160, 0],
      [7.25, 10, 160, 90],
    ]);
  });

  it("times in hh:mm:ss.mmm past an hour", () => {
    expect(vttTime(3725.5)).toBe("01:02:05.500");
    expect(vttTime(0)).toBe("00:00:00.000");
  });
});

describe("which frames get a tile", () => {
  it("all up to 300, else 300 spread evenly from the first", () => {
    const few = [1, 2, 3];
    expect([...framesWithTiles(few)]).toEqual(few);
    const many = Array.from({ length: 1000 }, (_, i) => i + 1);
    const chosen = [...framesWithTiles(many)];
    expect(chosen).toHaveLength(300);
    expect(chosen.slice(0, 4)).toEqual([1, 4, 7, 11]);
  });
});
