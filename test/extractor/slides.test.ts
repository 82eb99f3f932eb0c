// mode "slides" on the generated deck (test/support/slide-deck.ts: six slides in seven showings,
// 0.5 s cross-fades, a pointer moving over two, the first slide shown again fifth), through the
// extractor with real ffmpeg: exactly seven frames, one per showing, in order; the fifth marked
// as a repeat of the first; each frame's picture is its slide, settled (its background colour
// and its title's ink, which a frame from a fade has not), at a time inside the showing; each
// slide's start and end within 0.5 s of where the deck settles and starts to fade; count 4 keeps
// the four most distinct (decision 0300).
import { describe, expect, it } from "vitest";
import type { FrameResult } from "../../schema/messages.ts";
import { SLIDES, showingTimes, slideDeck } from "../support/slide-deck.ts";
import { frameBytes, rgbPixels, runJob } from "./helpers.ts";

/** What decision 0300 promises for start and end: within a step of the change, here a fade. */
const SPAN_TOLERANCE = 0.5;
const SHOWINGS = showingTimes();

/** Mean RGB of the band under the title and the pointer, and the title band's share of ink. */
async function looks(bytes: Buffer) {
  const { data, width, height } = await rgbPixels(bytes);
  const mean = [0, 0, 0];
  let count = 0;
  for (let y = Math.round(height * 0.86); y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) mean[c] += data[i + c];
      count++;
    }
  }
  const inkShare = (ink: "white" | "black") => {
    let inked = 0;
    let all = 0;
    // The title's band: y 170–290 of 720 (fontsize 130).
    for (let y = Math.round(height * 0.25); y < Math.round(height * 0.4); y++) {
      for (let x = 0; x < width; x++) {
        const i = (y * width + x) * 3;
        const lightness = (data[i] + data[i + 1] + data[i + 2]) / 3;
        if (ink === "white" ? lightness > 235 : lightness < 20) inked++;
        all++;
      }
    }
    return inked / all;
  };
  return { background: mean.map((v) => v / count), inkShare, width, height };
}

async function expectSettledSlide(
  run: Awaited<ReturnType<typeof runJob>>,
  frame: FrameResult,
  slide: number,
) {
  expect(frame.status).toBe("ok");
  expect(frame.pts).toBe(frame.timestamp);
  const seen = await looks(await frameBytes(run, frame.index));
  expect([seen.width, seen.height]).toEqual([1280, 720]);
  const { rgb, ink, title } = SLIDES[slide];
  // Within the YUV 4:2:0 round trip's error. A frame from a fade mixes two backgrounds, 20 or
  // more off halfway (any two slides differ by 40 or more in some channel).
  for (let c = 0; c < 3; c++) {
    expect(Math.abs(seen.background[c] - rgb[c]), `${title} channel ${c}`).toBeLessThan(8);
  }
  expect(seen.inkShare(ink), title).toBeGreaterThan(0.05);
}

describe("mode slides", () => {
  it("gives one frame per showing on the deck, marks the repeat, and each is the settled slide", async () => {
    const deck = await slideDeck();
    const run = await runJob(deck, { mode: "slides", format: "png" });
    expect(run.outcome.status).toBe("completed");
    const frames = run.outcome.frames;
    expect(frames.map((f) => f.index)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(frames.map((f) => f.slide?.repeat_of ?? null)).toEqual([
      null,
      null,
      null,
      null,
      1,
      null,
      null,
    ]);
    for (const [i, frame] of frames.entries()) {
      const showing = SHOWINGS[i];
      // Inside the settled showing, away from both fades.
      expect(frame.timestamp).toBeGreaterThanOrEqual(showing.settledFrom);
      expect(frame.timestamp).toBeLessThanOrEqual(showing.settledTo);
      await expectSettledSlide(run, frame, showing.slide);
      const span = frame.slide;
      expect(span, `frame ${frame.index}`).toBeTruthy();
      if (!span) continue;
      // A look near the end of a fade may already be within the slide's threshold: either side.
      expect(Math.abs(span.start - showing.settledFrom)).toBeLessThanOrEqual(SPAN_TOLERANCE);
      expect(Math.abs(span.end - showing.settledTo)).toBeLessThanOrEqual(SPAN_TOLERANCE);
      expect(span.start).toBeLessThan(frame.timestamp);
      expect(span.end).toBeGreaterThan(frame.timestamp);
    }
    // The last slide lasts to the end of the video.
    expect(frames[6].slide?.end).toBe(run.outcome.duration_seconds);
  });

  it("count 4 keeps the four most distinct: not the repeat, and one of each same-brightness pair", async () => {
    const deck = await slideDeck();
    const run = await runJob(deck, { mode: "slides", count: 4, format: "png" });
    expect(run.outcome.status).toBe("completed");
    const frames = run.outcome.frames;
    expect(frames).toHaveLength(4);
    // ALPHA, BRAVO, CHARLIE (DELTA is later in its pair), ECHO (FOXTROT is later in its pair).
    const kept = [0, 1, 2, 5];
    for (const [i, frame] of frames.entries()) {
      const showing = SHOWINGS[kept[i]];
      expect(frame.timestamp).toBeGreaterThanOrEqual(showing.settledFrom);
      expect(frame.timestamp).toBeLessThanOrEqual(showing.settledTo);
      expect(frame.slide?.repeat_of ?? null).toBeNull();
      await expectSettledSlide(run, frame, showing.slide);
    }
  });
});
