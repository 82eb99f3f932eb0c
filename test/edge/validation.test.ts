// Validation of the create-job request: every constraint of the spec, each failing with
// InvalidRequest (InvalidUrl for the link) and a message that names the field.
import { describe, expect, it } from "vitest";
import { api, createAccount } from "./support/api.ts";

const URL = "https://cdn.example.com/clip.mp4";

const INVALID: [string, Record<string, unknown>, string, string][] = [
  ["every below 0.1", { url: URL, every: 0.05 }, "InvalidRequest", "every"],
  ["every above 3600", { url: URL, every: 3601 }, "InvalidRequest", "every"],
  ["count of 0", { url: URL, count: 0 }, "InvalidRequest", "count"],
  ["a fractional count", { url: URL, count: 2.5 }, "InvalidRequest", "count"],
  ["a negative timestamp", { url: URL, timestamps: [1, -1] }, "InvalidRequest", "timestamps"],
  [
    "501 timestamps",
    { url: URL, timestamps: Array.from({ length: 501 }, (_, i) => i) },
    "InvalidRequest",
    "timestamps",
  ],
  ["a negative start", { url: URL, start: -1 }, "InvalidRequest", "start"],
  ["an end of 0", { url: URL, end: 0 }, "InvalidRequest", "end"],
  ["end before start", { url: URL, start: 10, end: 5 }, "InvalidRequest", "end"],
  ["an unknown format", { url: URL, format: "gif" }, "InvalidRequest", "format"],
  ["an unlisted resolution", { url: URL, resolution: "1000" }, "InvalidRequest", "resolution"],
  ["max_width below 64", { url: URL, max_width: 63 }, "InvalidRequest", "max_width"],
  ["an unknown output", { url: URL, output: "tar" }, "InvalidRequest", "output"],
  [
    "count with timestamps",
    { url: URL, count: 3, timestamps: [1] },
    "InvalidRequest",
    "timestamps",
  ],
  ["interval mode with count", { url: URL, mode: "interval", count: 3 }, "InvalidRequest", "count"],
  ["count mode without count", { url: URL, mode: "count" }, "InvalidRequest", "count"],
  [
    "timestamps mode with every",
    { url: URL, mode: "timestamps", timestamps: [1], every: 2 },
    "InvalidRequest",
    "every",
  ],
  [
    "timestamps mode with a range",
    { url: URL, timestamps: [1], start: 2 },
    "InvalidRequest",
    "start",
  ],
  ["an unknown field", { url: URL, fromat: "png" }, "InvalidRequest", "fromat"],
  ["a missing url", { count: 3 }, "InvalidUrl", "url"],
  ["a url that is not a URL", { url: "not a url" }, "InvalidUrl", "url"],
  ["an ftp url", { url: "ftp://example.com/a.mp4" }, "InvalidUrl", "url"],
  ["a loopback url", { url: "http://127.0.0.1/a.mp4" }, "InvalidUrl", "url"],
  ["a metadata url", { url: "http://169.254.169.254/latest/meta-data/" }, "InvalidUrl", "url"],
  [
    "an http webhook",
    { url: URL, webhook_url: "http://hooks.example.com/x" },
    "InvalidRequest",
    "webhook_url",
  ],
  [
    "a private webhook",
    { url: URL, webhook_url: "https://10.0.0.1/x" },
    "InvalidRequest",
    "webhook_url",
  ],
];

describe("POST /v1/jobs validation", () => {
  it.each(INVALID)("refuses %s", async (_label, body, name, field) => {
    const account = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", { body, headers: account.auth });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      name: "BadRequest",
      code: 400,
      className: "bad-request",
      data: { name },
    });
    expect(res.body.message).toContain(field);
  });

  it("refuses a body that is not JSON", async () => {
    const account = await createAccount();
    const res = await api("POST", "/v1/jobs", { rawBody: "{nope", headers: account.auth });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
  });

  it.each([
    [{ url: URL }, { mode: "interval", every: 1 }],
    [
      { url: URL, count: 4 },
      { mode: "count", count: 4 },
    ],
    [
      { url: URL, timestamps: [0, 1.5] },
      { mode: "timestamps", timestamps: [0, 1.5] },
    ],
  ])("infers the mode of %j", async (body, expected) => {
    const account = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", { body, headers: account.auth });
    expect(res.status).toBe(201);
    expect(res.body.options).toMatchObject({
      ...expected,
      format: "jpg",
      resolution: 1080,
      output: "urls",
    });
  });
});

describe("GET /v1/jobs validation", () => {
  it.each([["limit=0"], ["limit=101"], ["skip=-1"], ["status=expired"], ["limit=abc"]])(
    "refuses %s",
    async (query) => {
      const account = await createAccount();
      const res = await api("GET", `/v1/jobs?${query}`, { headers: account.auth });
      expect(res.status).toBe(400);
      expect(res.body.data.name).toBe("InvalidRequest");
      expect(res.body.message).toContain(query.split("=")[0]);
    },
  );

  it("answers 404 JobNotFound for a job id that is not a UUID", async () => {
    const account = await createAccount();
    const res = await api("GET", "/v1/jobs/not-a-uuid", { headers: account.auth });
    expect(res.status).toBe(404);
    expect(res.body.data.name).toBe("JobNotFound");
  });
});
