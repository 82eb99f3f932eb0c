// A storyboard's thumbnail track in Debian's Chromium, as a player on a customer's site would
// load it: the page comes from another origin than the API, the <video crossorigin> carries a
// <track kind="metadata" default> pointing at the job's vtt_url, and the page reads the cues.
// Each cue's text is the sprite's signed URL with an #xywh fragment, and that URL loads the
// sprite in the page. A copy of the same track served without CORS is refused: that header is
// why the edge serves the track itself.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import { makeLavfiClip } from "../extractor/helpers.ts";
import { startTestServer, type TestServer } from "../sources/support/servers.ts";
import { launchBrowser } from "./support/browser.ts";

let h: Harness;
let browser: Browser;
let elsewhere: TestServer;

beforeAll(async () => {
  h = await startHarness();
  browser = await launchBrowser();
  elsewhere = await startTestServer();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await elsewhere?.close();
  await h?.close();
});

function page(videoUrl: string, trackUrl: string): string {
  return `<!doctype html><html lang="en"><title>player</title>
<video id="v" crossorigin="anonymous" preload="metadata" src="${videoUrl}">
  <track kind="metadata" default src="${trackUrl}">
</video></html>`;
}

interface ReadCues {
  state: string;
  cues: { start: number; end: number; text: string }[];
}

/** Waits for the track to load or fail, then reads its cues in the page. */
const readCues = () =>
  new Promise<ReadCues>((resolve) => {
    const video = document.getElementById("v") as HTMLVideoElement;
    const element = video.querySelector("track") as HTMLTrackElement;
    const done = (state: string) => {
      const cues = [...(element.track.cues ?? [])] as VTTCue[];
      resolve({
        state,
        cues: cues.map((c) => ({ start: c.startTime, end: c.endTime, text: c.text })),
      });
    };
    if (element.readyState === 2) return done("loaded");
    if (element.readyState === 3) return done("error");
    element.addEventListener("load", () => done("loaded"));
    element.addEventListener("error", () => done("error"));
  });

describe("thumbnail track in Chromium", { timeout: 120_000 }, () => {
  it("loads cross-origin as <track kind=metadata>, cues cover the video, each cuts the sprite", async () => {
    const clip = await makeLavfiClip(
      "thumbnails",
      ["testsrc2=s=320x180:r=25:d=3", "smptehdbars=s=320x180:r=25:d=3"],
      "[0][1]concat=n=2:v=1,format=yuv420p[v]",
    );
    const videoUrl = h.serveVideo("/media/thumbnails.mp4", clip);
    const account = await h.newKey("starter");
    const res = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, count: 6, storyboard: true },
      headers: account.auth,
    });
    expect(res.body.status).toBe("completed");
    const board = res.body.storyboard;

    h.videos.route("/player.html", (_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(page(videoUrl, board.vtt_url));
    });
    // The same track from a server that does not allow other origins to read it.
    const copy = await (await fetch(board.vtt_url)).text();
    elsewhere.route("/thumbnails.vtt", (_request, response) => {
      response.writeHead(200, { "content-type": "text/vtt" });
      response.end(copy);
    });
    h.videos.route("/player-without-cors.html", (_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(page(videoUrl, `${elsewhere.origin}/thumbnails.vtt`));
    });

    const tab = await browser.newPage();
    try {
      await tab.goto(`${h.videos.origin}/player.html`);
      expect(new URL(board.vtt_url).origin).not.toBe(h.videos.origin);
      const read = await tab.evaluate(readCues);
      expect(read.state).toBe("loaded");
      expect(read.cues).toHaveLength(6);
      expect(read.cues[0].start).toBe(0);
      read.cues.slice(1).forEach((cue, i) => {
        expect(cue.start).toBeCloseTo(read.cues[i].end, 6);
      });
      expect(read.cues[5].end).toBeCloseTo(res.body.duration_seconds, 2);
      read.cues.forEach((cue, i) => {
        const [url, fragment] = cue.text.split("#");
        expect(url).toBe(board.sprite_url);
        expect(fragment).toBe(`xywh=${(i % 5) * 320},${Math.floor(i / 5) * 180},320,180`);
      });
      // The URL in a cue loads the sprite in the page, at the grid's size.
      const size = await tab.evaluate(
        (src) =>
          new Promise<[number, number]>((resolve, reject) => {
            const image = new Image();
            image.onload = () => resolve([image.naturalWidth, image.naturalHeight]);
            image.onerror = () => reject(new Error("sprite did not load"));
            image.src = src;
          }),
        read.cues[0].text.split("#")[0],
      );
      expect(size).toEqual([board.columns * board.tile_width, board.rows * board.tile_height]);

      await tab.goto(`${h.videos.origin}/player-without-cors.html`);
      const refused = await tab.evaluate(readCues);
      expect(refused).toEqual({ state: "error", cues: [] });
    } finally {
      await tab.close();
    }
  });
});
