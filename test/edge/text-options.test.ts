// `text: true` and `text_languages` at the edge (issue 38, decision 0262): what a request may
// ask (400s that name the field), what the job keeps as its options, what it holds and
// charges (1 more credit per 10 frames read), and the rule as GET /v1/pricing writes it.
import { describe, expect, it } from "vitest";
import { creditHold, mostCredits, resultCredits } from "../../edge/jobs/options.ts";
import { PLANS } from "../../schema/plans.ts";
import { api, createAccount } from "./support/api.ts";

const URL = "https://cdn.example.com/clip.mp4";

async function create(body: Record<string, unknown>) {
  const { auth } = await createAccount({ plan: "starter" });
  return api("POST", "/v1/jobs", { body: { url: URL, ...body }, headers: auth });
}

function params(body: any): string[] {
  return body.data.errors.map((e: { param: string }) => e.param);
}

describe("text options on POST /v1/jobs", () => {
  it("refuses text_languages without text: true, naming text_languages", async () => {
    const res = await create({ count: 3, text_languages: ["en"] });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
    expect(params(res.body)).toEqual(["text_languages"]);
    expect(res.body.data.errors[0].message).toBe("text_languages needs text: true");
    const off = await create({ count: 3, text: false, text_languages: ["en"] });
    expect(off.status).toBe(400);
    expect(params(off.body)).toEqual(["text_languages"]);
  });

  it("refuses a language it cannot read, naming the entry", async () => {
    const res = await create({ count: 3, text: true, text_languages: ["en", "klingon"] });
    expect(res.status).toBe(400);
    expect(params(res.body)).toEqual(["text_languages[1]"]);
    expect(res.body.data.errors[0].message).toContain("text_languages[1]");
    expect(res.body.data.errors[0].message).toContain("zh-Hant");
  });

  it("refuses more than 3 languages and an empty list, naming text_languages", async () => {
    const many = await create({ count: 3, text: true, text_languages: ["en", "de", "fr", "es"] });
    expect(many.status).toBe(400);
    expect(params(many.body)).toEqual(["text_languages"]);
    const none = await create({ count: 3, text: true, text_languages: [] });
    expect(none.status).toBe(400);
    expect(params(none.body)).toEqual(["text_languages"]);
  });

  it("refuses text that is not a boolean, naming text", async () => {
    const res = await create({ count: 3, text: "yes" });
    expect(res.status).toBe(400);
    expect(params(res.body)).toEqual(["text"]);
  });

  it("accepts text in any mode and keeps it, and its languages, in the job's options", async () => {
    for (const body of [
      { count: 3, text: true },
      { every: 5, text: true, text_languages: ["de", "en", "de"] },
      { timestamps: [1, 2], text: true },
      { mode: "scenes", text: true },
      { mode: "best", text: true },
    ]) {
      const res = await create(body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.options.text).toBe(true);
    }
    const res = await create({ every: 5, text: true, text_languages: ["de", "en", "de"] });
    expect(res.body.options.text_languages).toEqual(["de", "en"]);
    const plain = await create({ count: 3 });
    expect(plain.body.options).not.toHaveProperty("text");
  });
});

describe("what text costs", () => {
  const plan = PLANS.starter;
  const frames = (n: number, read: boolean) =>
    Array.from({ length: n }, () => ({
      status: "ok",
      text: read ? { content: "", confidence: 0, language: "en" } : undefined,
    }));

  it("charges 1 more credit per 10 frames read (started), on top of the mode's rule", () => {
    const options = {
      mode: "timestamps",
      format: "jpg",
      resolution: 1080,
      output: "urls",
    } as const;
    const result = (n: number) => ({
      status: "completed",
      processed_seconds: 5,
      frames: frames(n, true),
    });
    const withText = {
      ...options,
      timestamps: Array.from({ length: 12 }, (_, i) => i),
      text: true,
    };
    expect(resultCredits(result(12), withText, plan)).toBe(2 + 2);
    expect(resultCredits(result(12), { ...withText, text: undefined }, plan)).toBe(2);
    expect(resultCredits(result(10), withText, plan)).toBe(1 + 1);
    // A failed frame's text is not read, nor charged.
    const someFailed = {
      status: "completed",
      processed_seconds: 5,
      frames: [...frames(10, true), { status: "error", text: null }],
    };
    expect(resultCredits(someFailed, withText, plan)).toBe(1 + 1);
    // A failed job costs nothing.
    expect(resultCredits({ ...result(12), status: "failed" }, withText, plan)).toBe(0);
    // Held at creation: the first frame's text; at most: every frame's.
    expect(creditHold(withText)).toBe(2 + 1);
    expect(mostCredits(withText, plan)).toBe(2 + 2);
  });

  it("is written in GET /v1/pricing's rules", async () => {
    const res = await api("GET", "/v1/pricing");
    expect(res.status).toBe(200);
    expect(res.body.credit_rules.text).toMatch(/^1 more credit per 10 frames read/);
  });
});
