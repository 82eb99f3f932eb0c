// mode live at creation (decision 0360): what the request may carry, the options stored, the
// credits held up front (every started minute of the duration) and the most a result can cost.
import { describe, expect, it } from "vitest";
import {
  checkPlanLimits,
  creditHold,
  mostCredits,
  normaliseOptions,
  resultCredits,
} from "../../edge/jobs/options.ts";
import { mostFramesFor } from "../../edge/jobs/result-limits.ts";
import { askedFacts } from "../../edge/routes/account/job-asked.tsx";
import { createBodyFor, optionsParts } from "../../edge/routes/account/job-options.ts";
import { CreateJobRequestSchema } from "../../schema/api.ts";
import { CATALOG, PLANS } from "../../schema/plans.ts";

const url = "https://live.example.com/stream.m3u8";

function problems(body: Record<string, unknown>): string[] {
  const parsed = CreateJobRequestSchema.safeParse({ url, ...body });
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

function options(body: Record<string, unknown>) {
  return normaliseOptions(CreateJobRequestSchema.parse({ url, ...body }), PLANS.starter);
}

describe("a live job's request", () => {
  it("takes no every (the latest frame) or every with duration", () => {
    expect(problems({ mode: "live" })).toEqual([]);
    expect(problems({ mode: "live", every: 2, duration: 6 })).toEqual([]);
    expect(options({ mode: "live" })).toEqual({
      mode: "live",
      format: "jpg",
      resolution: 1080,
      output: "urls",
    });
    expect(options({ mode: "live", every: 2, duration: 6 })).toMatchObject({
      mode: "live",
      every: 2,
      duration: 6,
    });
  });

  it("refuses every without duration, duration without every, and a duration over 600 s", () => {
    expect(problems({ mode: "live", every: 2 })).toEqual([
      "duration: live mode takes every and duration together (or neither, for the latest frame)",
    ]);
    expect(problems({ mode: "live", duration: 60 })).toEqual([
      "every: live mode takes every and duration together (or neither, for the latest frame)",
    ]);
    expect(problems({ mode: "live", every: 2, duration: 601 })[0]).toMatch(/^duration: /);
  });

  it("refuses what needs a whole video, and duration in other modes", () => {
    expect(problems({ mode: "live", count: 3 })).toContain(
      "count: live mode takes every and duration; count does not apply to a live stream",
    );
    expect(problems({ mode: "live", start: 5 })).toContain(
      "start: live mode takes every and duration; start does not apply to a live stream",
    );
    expect(problems({ mode: "interval", every: 2, duration: 6 })).toEqual([
      "duration: duration applies to live mode only",
    ]);
  });
});

describe("a live job's credits", () => {
  it("holds every started minute of its duration up front, 1 for the latest frame", () => {
    expect(creditHold(options({ mode: "live" }))).toBe(1);
    expect(creditHold(options({ mode: "live", every: 2, duration: 6 }))).toBe(1);
    expect(creditHold(options({ mode: "live", every: 10, duration: 600 }))).toBe(10);
    expect(creditHold(options({ mode: "live", every: 5, duration: 61 }))).toBe(2);
  });

  it("settles on the minutes watched, never above its duration's, and nothing when failed", () => {
    const asked = options({ mode: "live", every: 10, duration: 600 });
    const ok = (n: number) => Array.from({ length: n }, () => ({ status: "ok" }));
    const settle = (processed: number, frames: number, status = "completed") =>
      resultCredits(
        { status, processed_seconds: processed, frames: ok(frames) },
        asked,
        PLANS.starter,
      );
    expect(settle(600, 60)).toBe(10);
    expect(settle(130, 13)).toBe(3);
    expect(settle(130, 13, "failed")).toBe(0);
    // A result claiming more than the job could watch is held to its duration's minutes.
    expect(settle(6000, 60)).toBe(10);
    expect(mostCredits(asked, PLANS.starter)).toBe(10);
  });

  it("plans its frames from every and duration; the plan's limit applies", () => {
    expect(mostFramesFor(options({ mode: "live", every: 2, duration: 6 }), PLANS.starter, 0)).toBe(
      3,
    );
    expect(mostFramesFor(options({ mode: "live" }), PLANS.starter, null)).toBe(1);
    expect(() =>
      checkPlanLimits(
        normaliseOptions(
          CreateJobRequestSchema.parse({ url, mode: "live", every: 0.5, duration: 600 }),
          PLANS.free,
        ),
        PLANS.free,
      ),
    ).toThrow(/1200 frames; the free plan allows 300 per job/);
  });

  it("the pricing rules name it", () => {
    expect(CATALOG.credit_rules.live).toMatch(/^like interval: 1 credit per started minute/);
  });

  it("the dashboard names what it asked for, and its curl asks for it again", () => {
    const asked = options({ mode: "live", every: 2, duration: 6 });
    expect(optionsParts(asked)[0]).toBe("live, every 2 s for 6 s");
    expect(optionsParts(options({ mode: "live" }))[0]).toBe("live, latest frame");
    const facts = new Map(askedFacts(asked));
    expect(facts.get("Mode")).toBe("live (Frames of a live stream as it plays)");
    expect(facts.get("Watch for")).toBe("6 s");
    const body = createBodyFor(url, asked);
    expect(CreateJobRequestSchema.safeParse(body).success).toBe(true);
    expect(body).toMatchObject({ mode: "live", every: 2, duration: 6 });
  });
});
