// Issue 38's "Must show" for slides, over HTTP on the real stack: the generated deck (six
// slides in seven showings, 0.5 s cross-fades, a moving pointer on two, the first slide shown
// again; test/support/slide-deck.ts) served from 127.0.0.1, `mode: "slides", text: true`:
// seven frames, each inside its showing, whose text holds the slide's title (case-insensitive,
// at most 1 edit), the repeat marked, start and end within 0.5 s, the same read back from D1
// and in the webhook, charged as GET /v1/pricing's rules say (checked on the balance); the
// fields the mode does not take are refused naming them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { editDistance } from "../../extractor/quality/slides.ts";
import { SLIDES, showingTimes, slideDeck } from "../support/slide-deck.ts";
import {
  call,
  creditsAvailable,
  type Harness,
  startHarness,
  startReceiver,
} from "./support/harness.ts";

/** A title is read when a word of the text is within this many edits of it (decision 0300). */
const TITLE_EDITS = 1;
const SPAN_TOLERANCE = 0.5;
const SHOWINGS = showingTimes();

let h: Harness;
let deckUrl: string;
let account: Awaited<ReturnType<Harness["newKey"]>>;

beforeAll(async () => {
  h = await startHarness();
  deckUrl = h.serveVideo("/media/slide-deck.mp4", await slideDeck());
  account = await h.newKey("starter");
}, 120_000);

afterAll(async () => {
  await h?.close();
});

function holdsTitle(content: string, title: string): boolean {
  return content
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((word) => word.length > 0 && editDistance(word, title.toLowerCase()) <= TITLE_EDITS);
}

describe("mode slides over HTTP", { timeout: 180_000 }, () => {
  it("gives seven frames, one per showing, each reading its slide's title, charged by the rules", async () => {
    const pricing = await call(h.stack, "GET", "/pricing");
    expect(pricing.body.credit_rules.slides).toMatch(/1 credit per 10 delivered frames/);
    expect(pricing.body.credit_rules.text).toMatch(/1 more credit per 10 frames read/);
    const receiver = await startReceiver();
    try {
      const before = await creditsAvailable(h.stack, account.auth);
      const res = await call(h.stack, "POST", "/jobs?wait=true", {
        body: { url: deckUrl, mode: "slides", text: true, webhook_url: receiver.url },
        headers: account.auth,
      });
      expect(res.status).toBe(201);
      const job = res.body;
      expect(job.status, JSON.stringify(job.error)).toBe("completed");
      expect(job.options).toMatchObject({ mode: "slides", text: true });
      expect(job.frames).toHaveLength(7);
      for (const [i, frame] of job.frames.entries()) {
        const showing = SHOWINGS[i];
        const title = SLIDES[showing.slide].title;
        expect(frame.status).toBe("ok");
        expect(frame.timestamp).toBeGreaterThanOrEqual(showing.settledFrom);
        expect(frame.timestamp).toBeLessThanOrEqual(showing.settledTo);
        expect({ title, read: holdsTitle(frame.text.content, title) }).toEqual({
          title,
          read: true,
        });
        expect(frame.slide.repeat_of).toBe(i === 4 ? 1 : null);
        expect(Math.abs(frame.slide.start - showing.settledFrom)).toBeLessThanOrEqual(
          SPAN_TOLERANCE,
        );
        expect(Math.abs(frame.slide.end - showing.settledTo)).toBeLessThanOrEqual(SPAN_TOLERANCE);
      }
      // Like scenes: 7 frames → 1 credit; text: 1 more per 10 frames read → 1.
      expect(job.credits_charged).toBe(2);
      expect(await creditsAvailable(h.stack, account.auth)).toBe(before - 2);

      // Read back from D1, and in the webhook: the same slides.
      const read = await call(h.stack, "GET", `/jobs/${job.id}`, { headers: account.auth });
      expect(read.body.frames.map((f: any) => f.slide)).toEqual(
        job.frames.map((f: any) => f.slide),
      );
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(receiver.received).toHaveLength(1);
      const event = JSON.parse(receiver.received[0].body);
      expect(event.type).toBe("job.completed");
      expect(event.data.frames.map((f: any) => f.slide)).toEqual(
        job.frames.map((f: any) => f.slide),
      );
    } finally {
      await receiver.close();
    }
  });

  it("refuses every, timestamps, skip and sensitivity with slides, naming each", async () => {
    const res = await call(h.stack, "POST", "/jobs", {
      body: {
        url: deckUrl,
        mode: "slides",
        every: 2,
        timestamps: [1],
        skip: ["duplicate"],
        sensitivity: 0.5,
      },
      headers: account.auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
    const params = res.body.data.errors.map((e: { param: string }) => e.param);
    for (const field of ["every", "timestamps", "skip", "sensitivity"]) {
      expect(params).toContain(field);
    }
  });
});
