// mode live through the whole stack (issue 40, decision 0360): workerd and the real extractor
// on a local live playlist that slides with the clock. The latest frame is the newest segment's
// last; every 2 s for 6 s gives three frames in stream order, 2 s apart, with captured_at from
// PROGRAM-DATE-TIME, while job.progress counts the frames caught; each is charged its started
// minute. A stream that stalls fails, and the balance is exactly what it was.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LiveOrigin } from "../sources/support/hls-live-origin.ts";
import {
  LIVE_EPOCH_MS,
  makeLiveSegments,
  startLiveOrigin,
} from "../sources/support/hls-live-origin.ts";
import { readImagePattern } from "../support/videos.ts";
import { call, download, type Harness, startHarness } from "./support/harness.ts";

let h: Harness;
const origins: LiveOrigin[] = [];

beforeAll(async () => {
  h = await startHarness();
  await makeLiveSegments();
});

afterEach(async () => {
  for (const origin of origins.splice(0)) await origin.close();
});

afterAll(async () => {
  await h?.close();
});

async function liveOrigin(clock: number) {
  const origin = await startLiveOrigin({ clock });
  origins.push(origin);
  return origin;
}

async function available(auth: Record<string, string>): Promise<number> {
  return (await call(h.stack, "GET", "/usage", { headers: auth })).body.credits.available;
}

async function numbersOf(frames: { url: string | null }[]) {
  return Promise.all(
    frames.map(async (f) =>
      f.url ? (await readImagePattern((await download(f.url)).bytes)).number : null,
    ),
  );
}

const onAir = (seconds: number) => new Date(LIVE_EPOCH_MS + seconds * 1000).toISOString();

describe("mode live through the stack", () => {
  it("with no every: the newest frame, on air at its PROGRAM-DATE-TIME, 1 credit", async () => {
    const origin = await liveOrigin(20.5);
    origin.freeze();
    const account = await h.newKey("starter");
    const before = await available(account.auth);
    const job = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: origin.url, mode: "live", format: "png", resolution: 360 },
      headers: account.auth,
    });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect(job.body.status, JSON.stringify(job.body.error)).toBe("completed");
    expect(await numbersOf(job.body.frames)).toEqual([199]);
    expect(job.body.frames[0]).toMatchObject({
      timestamp: 19.9,
      captured_at: onAir(19.9),
      captured_at_source: "program_date_time",
    });
    expect(job.body.options).toEqual({
      mode: "live",
      format: "png",
      resolution: 360,
      output: "urls",
    });
    expect(origin.segmentsFetched()).toEqual([9]);
    expect(job.body.credits_charged).toBe(1);
    expect(before - (await available(account.auth))).toBe(1);
  });

  it("every 2 s for 6 s: three frames in stream order as the stream plays, progress counting them", async () => {
    const origin = await liveOrigin(20.2);
    const account = await h.newKey("starter");
    const before = await available(account.auth);
    const created = await call(h.stack, "POST", "/jobs", {
      body: {
        url: origin.url,
        mode: "live",
        every: 2,
        duration: 6,
        format: "png",
        resolution: 360,
      },
      headers: account.auth,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const seen: { frames_done: number; frames_total: number | null }[] = [];
    let job = created.body;
    const deadline = Date.now() + 60_000;
    while (job.status === "queued" || job.status === "processing") {
      if (Date.now() > deadline) throw new Error("the live job did not end in 60 s");
      if (job.progress?.stage === "extracting") seen.push(job.progress);
      await new Promise((resolve) => setTimeout(resolve, 300));
      job = (await call(h.stack, "GET", `/jobs/${created.body.id}`, { headers: account.auth }))
        .body;
    }
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(await numbersOf(job.frames)).toEqual([199, 219, 239]);
    expect(job.frames.map((f: { timestamp: number }) => f.timestamp)).toEqual([19.9, 21.9, 23.9]);
    expect(job.frames.map((f: { captured_at: string }) => f.captured_at)).toEqual(
      [19.9, 21.9, 23.9].map(onAir),
    );
    expect(origin.segmentsFetched()).toEqual([9, 10, 11]);
    // While it watched, progress counted the frames caught out of 3.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.frames_total === 3)).toBe(true);
    expect(seen.some((p) => p.frames_done >= 1 && p.frames_done < 3)).toBe(true);
    expect(job.credits_charged).toBe(1);
    expect(before - (await available(account.auth))).toBe(1);
  });

  it("a stream that stalls fails after its documented wait, and nothing is charged", async () => {
    const origin = await liveOrigin(20.5);
    origin.freeze();
    const account = await h.newKey("starter");
    const before = await available(account.auth);
    const job = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: origin.url, mode: "live", every: 2, duration: 6 },
      headers: account.auth,
    });
    expect(job.body.status).toBe("failed");
    expect(job.body.error.name).toBe("DownloadFailed");
    expect(job.body.error.message).toMatch(/^the live playlist gained no segment for \d+ s/);
    expect(job.body.credits_charged ?? 0).toBe(0);
    expect(await available(account.auth)).toBe(before);
  });

  it("a VOD playlist with mode live fails naming why, uncharged", async () => {
    const directory = await makeLiveSegments();
    const url = h.serveVideo(
      "/live-vod/index.m3u8",
      `${directory}/index.m3u8`,
      "application/vnd.apple.mpegurl",
    );
    const account = await h.newKey("starter");
    const before = await available(account.auth);
    const job = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url, mode: "live" },
      headers: account.auth,
    });
    expect(job.body.status).toBe("failed");
    expect(job.body.error.name).toBe("InvalidUrl");
    expect(job.body.error.message).toMatch(/a complete \(VOD\) playlist/);
    expect(await available(account.auth)).toBe(before);
  });
});
