// Issue 14 over HTTP on the real stack: scenes with skip black on a six-shot clip whose first
// shot fades in from black (6 frames, none black, each the picture at its pts), keyframes
// equal to ffprobe's list, the storyboard's URLs and ZIP entries, the thumbnail track's
// rewritten sprite URL, and the credits charged as GET /v1/pricing says.
import { unzipSync } from "fflate";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ffprobeFrameTimes,
  makeLavfiClip,
  meanAbsoluteDifference,
  meanLuma,
  referencePictures,
} from "../extractor/helpers.ts";
import { call, creditsAvailable, download, type Harness, startHarness } from "./support/harness.ts";
import { downloadPixels } from "./support/pixels.ts";

const SHOT = "s=320x180:r=25:d=2";
let h: Harness;
let clip: string;
let clipUrl: string;
let account: Awaited<ReturnType<Harness["newKey"]>>;

beforeAll(async () => {
  h = await startHarness();
  clip = await makeLavfiClip(
    "six-shots",
    [
      `testsrc2=${SHOT},fade=in:st=0:d=1`,
      `smptehdbars=${SHOT}`,
      "mandelbrot=s=320x180:r=25,trim=duration=2",
      `testsrc=${SHOT}`,
      `rgbtestsrc=${SHOT}`,
      `gradients=${SHOT}:speed=0.05`,
    ],
    "[0][1][2][3][4][5]concat=n=6:v=1,format=yuv420p[v]",
  );
  clipUrl = h.serveVideo("/media/six-shots.mp4", clip);
  account = await h.newKey("starter");
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe("frames worth looking at, over HTTP", { timeout: 120_000 }, () => {
  it("scenes + skip black: 6 frames, one per shot, none black, each exact; charged 1 credit", async () => {
    const before = await creditsAvailable(h.stack, account.auth);
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: clipUrl, mode: "scenes", skip: ["black"], format: "png" },
      headers: account.auth,
    });
    expect(res.status).toBe(201);
    const job = res.body;
    expect(job.status).toBe("completed");
    expect(job.frames.map((f: any) => f.timestamp)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(job.frames[0]).toMatchObject({ moved_reason: "black", scene_score: 1 });
    expect(job.frames[0].moved_to).toBeGreaterThan(0);
    const pictures = await Promise.all(job.frames.map((frame: any) => downloadPixels(frame.url)));
    const times = job.frames.map((frame: any) => frame.pts);
    const references = await referencePictures(clip, times, pictures[0]);
    for (const [i, picture] of pictures.entries()) {
      expect(meanLuma(picture.data)).toBeGreaterThan(25);
      expect(meanAbsoluteDifference(picture.data, references[i])).toBeLessThan(1.5);
    }
    // 6 frames charged like timestamps: 1 credit per 10.
    expect(job.credits_charged).toBe(1);
    expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 1);
  });

  it("keyframes: exactly ffprobe -skip_frame nokey's list", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: clipUrl, mode: "keyframes" },
      headers: account.auth,
    });
    expect(res.body.status).toBe("completed");
    const expected = await ffprobeFrameTimes(clip, true);
    expect(res.body.frames.map((f: any) => f.timestamp)).toEqual(expected);
    expect(res.body.frames.map((f: any) => f.pts)).toEqual(expected);
  });

  it("storyboard: sheet, sprite and track by URL and in the ZIP; cues cover the video; charged as one more frame", async () => {
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: clipUrl, count: 9, storyboard: true, output: "both" },
      headers: account.auth,
    });
    const job = res.body;
    expect(job.status).toBe("completed");
    // count mode: 1 started minute, 9 + 1 frames included.
    expect(job.credits_charged).toBe(1);
    const board = job.storyboard;
    expect(board).toMatchObject({ columns: 5, rows: 2, tile_width: 320, tile_height: 180 });
    const sheet = await download(board.image_url);
    expect(sheet.type).toBe("image/jpeg");
    expect(await sharp(sheet.bytes).metadata()).toMatchObject({ width: 1600, height: 360 });
    const sprite = await download(board.sprite_url);
    expect(await sharp(sprite.bytes).metadata()).toMatchObject({ width: 1600, height: 360 });

    const track = await fetch(board.vtt_url);
    expect(track.headers.get("content-type")).toBe("text/vtt; charset=utf-8");
    expect(track.headers.get("access-control-allow-origin")).toBe("*");
    const text = await track.text();
    const cues = [...text.matchAll(/^(\S+) --> (\S+)\n(\S+)$/gm)].map((m) => ({
      start: m[1],
      end: m[2],
      target: m[3],
    }));
    expect(cues).toHaveLength(9);
    expect(cues[0].start).toBe("00:00:00.000");
    cues.slice(1).forEach((cue, i) => {
      expect(cue.start).toBe(cues[i].end);
    });
    expect(cues[8].end).toBe("00:00:12.000");
    for (const cue of cues) {
      const [url, fragment] = cue.target.split("#");
      expect(fragment).toMatch(/^xywh=\d+,\d+,320,180$/);
      const fetched = await download(url);
      expect(Buffer.from(fetched.bytes).equals(Buffer.from(sprite.bytes))).toBe(true);
    }

    const zip = unzipSync((await download(job.zip_url)).bytes);
    expect(Buffer.from(zip["sprite.jpg"]).equals(Buffer.from(sprite.bytes))).toBe(true);
    expect(Buffer.from(zip["storyboard.jpg"]).equals(Buffer.from(sheet.bytes))).toBe(true);
    // In the ZIP the track keeps its relative sprite name, which resolves beside it.
    expect(Buffer.from(zip["thumbnails.vtt"]).toString("utf8")).toContain(
      "\nsprite.jpg#xywh=0,0,320,180\n",
    );
  });

  it("bad input gets the spec's error shape", async () => {
    const res = await call(h.stack, "POST", "/jobs", {
      body: { url: clipUrl, mode: "count", count: 2, sensitivity: 0.5, skip: ["shaky"] },
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
  });
});
