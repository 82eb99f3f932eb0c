// A token budget on POST /v1/jobs (decision 0311): what it accepts, and every bad budget
// refused with the spec's error body naming each problem's field.
import { describe, expect, it } from "vitest";
import { api, createAccount } from "./support/api.ts";

const URL = "https://cdn.example.com/clip.mp4";

async function create(body: Record<string, unknown>) {
  const account = await createAccount({ plan: "starter" });
  return api("POST", "/v1/jobs", { body: { url: URL, ...body }, headers: account.auth });
}

describe("budget on POST /v1/jobs", () => {
  it("is count mode by default, with job.budget echoing it until the job completes", async () => {
    const res = await create({ budget: { tokens: 4000, model: "claude" } });
    expect(res.status).toBe(201);
    expect(res.body.options).toMatchObject({
      mode: "count",
      budget: { tokens: 4000, model: "claude" },
    });
    expect(res.body.options.count).toBeUndefined();
    expect(res.body.options.max_width).toBeUndefined();
    expect(res.body.budget).toEqual({
      tokens: 4000,
      model: "claude",
      tokens_estimated: null,
      per_frame: null,
      frames: null,
      width: null,
      height: null,
    });
  });

  it.each(["scenes", "keyframes", "best"])("goes with %s mode", async (mode) => {
    const res = await create({ mode, budget: { tokens: 2000, model: "gemini" } });
    expect(res.status).toBe(201);
    expect(res.body.options).toMatchObject({ mode, budget: { tokens: 2000, model: "gemini" } });
    // best mode's count is the budget's to pick, not the default 1.
    expect(res.body.options.count).toBeUndefined();
  });

  it("leaves jobs without a budget without job.budget", async () => {
    const res = await create({ count: 2 });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty("budget");
  });

  const BAD: [string, Record<string, unknown>, string[]][] = [
    ["tokens of 0", { budget: { tokens: 0, model: "claude" } }, ["budget.tokens"]],
    ["negative tokens", { budget: { tokens: -5, model: "gpt" } }, ["budget.tokens"]],
    ["fractional tokens", { budget: { tokens: 10.5, model: "gpt" } }, ["budget.tokens"]],
    ["an unknown model", { budget: { tokens: 4000, model: "llama" } }, ["budget.model"]],
    ["no model", { budget: { tokens: 4000 } }, ["budget.model"]],
    [
      "an unknown field",
      { budget: { tokens: 4000, model: "gpt", detail: "low" } },
      ["budget.detail"],
    ],
    [
      "tokens below one frame for gemini",
      { budget: { tokens: 100, model: "gemini" } },
      ["budget.tokens"],
    ],
    ["with count", { count: 5, budget: { tokens: 4000, model: "claude" } }, ["count"]],
    [
      "with max_width",
      { max_width: 640, budget: { tokens: 4000, model: "claude" } },
      ["max_width"],
    ],
    ["in interval mode", { mode: "interval", budget: { tokens: 4000, model: "gpt" } }, ["budget"]],
    ["with timestamps", { timestamps: [1, 2], budget: { tokens: 4000, model: "gpt" } }, ["budget"]],
    [
      "with count, max_width and a bad model at once",
      { count: 3, max_width: 640, budget: { tokens: 0, model: "x" } },
      ["budget.tokens", "budget.model", "count", "max_width"],
    ],
  ];

  it.each(BAD)("refuses a budget %s, naming each problem", async (_label, body, params) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      name: "BadRequest",
      code: 400,
      className: "bad-request",
      data: { name: "InvalidRequest" },
    });
    const named = (res.body.data.errors as { param: string | null; message: string }[]).map(
      (problem) => problem.param,
    );
    expect(named.sort()).toEqual([...params].sort());
    // count and max_width are refused naming the budget too.
    for (const problem of res.body.data.errors as { param: string; message: string }[]) {
      if (problem.param === "count" || problem.param === "max_width") {
        expect(problem.message).toContain("budget");
      }
    }
  });
});
