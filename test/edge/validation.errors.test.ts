// Errors that say everything (issue 34): every problem of a request at once in data.errors,
// each naming its parameter in plain words; data.request_id equal to the X-Request-Id header;
// data.doc_url at the guide to the error's name. REST and MCP alike. The API also accepts the
// resolution a job echoes (a number).
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAccount, freshIp, ORIGIN } from "./support/api.ts";

const URL = "https://cdn.example.com/clip.mp4";

/** Wording no client should see: zod's, and raw patterns. */
const LIBRARY_WORDING =
  /Invalid (input|option|string)|expected \w+, received|Too (small|big)|Unrecognized key|\/\^|>=|<=/;

function expectExplained(body: any, headers: Headers, params: string[]) {
  expect(body.data.errors.map((e: { param: string }) => e.param)).toEqual(params);
  expect(body.message).toBe(body.data.errors[0].message);
  for (const problem of body.data.errors) {
    expect(problem.message).not.toMatch(LIBRARY_WORDING);
    // Each message names the parameter it is about.
    expect(problem.message).toContain(problem.param.replace(/\[\d+\]$/, ""));
  }
  expect(body.data.userMessage).not.toMatch(LIBRARY_WORDING);
  expect(body.data.request_id).toBe(headers.get("X-Request-Id"));
  expect(body.data.request_id).toMatch(/\S{8,}/);
  expect(body.data.doc_url).toBe(`${ORIGIN}/docs/errors#${body.data.name}`);
}

describe("a request with several problems", () => {
  it("names an unknown field, a bad every and a bad format, all three", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", {
      body: { url: URL, fromat: "png", every: 0.05, format: "gif" },
      headers: auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidRequest");
    expectExplained(res.body, res.headers, ["every", "format", "fromat"]);
    const [every, format, unknown] = res.body.data.errors;
    expect(every.message).toBe("every must be at least 0.1 (seconds); got 0.05");
    expect(format.message).toBe('format must be one of jpg, png or webp; got "gif"');
    expect(unknown.message).toBe("fromat is not a field of this request");
    expect(res.body.data.userMessage).toBe(
      "The request is not valid: every must be at least 0.1 (seconds); got 0.05 (and 2 more problems).",
    );
  });

  it("names two: a count sent as text and a resolution that is not one", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", {
      body: { url: URL, count: "3", resolution: 1000 },
      headers: auth,
    });
    expect(res.status).toBe(400);
    expectExplained(res.body, res.headers, ["count", "resolution"]);
    expect(res.body.data.errors[0].message).toBe('count must be a number; got "3"');
    expect(res.body.data.errors[1].message).toBe(
      "resolution must be one of 240, 360, 480, 720, 1080, 1440 or 2160 (a number or a string); got 1000",
    );
  });

  it("names six, with the rules between fields even when a field failed on its own", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", {
      body: {
        url: URL,
        count: 2.5,
        timestamps: [1, -1],
        max_width: 10,
        captions_language: "",
      },
      headers: auth,
    });
    expect(res.status).toBe(400);
    expectExplained(res.body, res.headers, [
      "count",
      "timestamps[1]",
      "max_width",
      "captions_language",
      "timestamps",
      "captions_language",
    ]);
    const messages = res.body.data.errors.map((e: { message: string }) => e.message);
    expect(messages).toEqual([
      "count must be a whole number; got 2.5",
      "timestamps[1] must be at least 0 (seconds); got -1",
      "max_width must be at least 64; got 10",
      'captions_language must be a language tag such as en, pt-BR or zh-Hant; got ""',
      "timestamps: count and timestamps cannot be combined",
      "captions_language needs captions: true",
    ]);
  });

  it("names five plain type and range problems of one body", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", {
      body: { url: URL, every: 0, format: "gif", max_width: 10, output: "tar", extra: 1 },
      headers: auth,
    });
    expect(res.status).toBe(400);
    expectExplained(res.body, res.headers, ["every", "format", "max_width", "output", "extra"]);
  });

  it("puts a bad link first, as InvalidUrl, beside the body's other problems", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", {
      body: {
        url: "ftp://example.com/a.mp4",
        every: 9999,
        webhook_url: "http://hooks.example.com",
      },
      headers: auth,
    });
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidUrl");
    expectExplained(res.body, res.headers, ["url", "webhook_url", "every"]);
  });

  it("says a body that is not an object is not one", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", { body: "hello", headers: auth });
    expect(res.status).toBe(400);
    expect(res.body.data.errors).toEqual([
      { param: "body", message: 'The body must be a JSON object; got "hello"' },
    ]);
  });

  it("names query problems the same way", async () => {
    const { auth } = await createAccount();
    const res = await api("GET", "/v1/jobs?limit=abc&status=gone", { headers: auth });
    expect(res.status).toBe(400);
    expectExplained(res.body, res.headers, ["limit", "status"]);
  });
});

describe("every error body", () => {
  it("carries the caller's own request id when it sent a sane one", async () => {
    const { auth } = await createAccount();
    const res = await api("GET", "/v1/jobs/7b0c7c50-9d4e-4c57-9a43-5d0f7b7f0a11", {
      headers: { ...auth, "X-Request-Id": "support-ticket-42" },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("X-Request-Id")).toBe("support-ticket-42");
    expect(res.body.data).toMatchObject({
      name: "JobNotFound",
      request_id: "support-ticket-42",
      doc_url: `${ORIGIN}/docs/errors#JobNotFound`,
      errors: [{ param: null, message: res.body.message }],
    });
  });

  it("names the parameter of a single problem found after the schema (the link)", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", { body: { url: "not a url" }, headers: auth });
    expect(res.status).toBe(400);
    expect(res.body.data.errors).toEqual([{ param: "url", message: res.body.message }]);
    expect(res.body.data.request_id).toBe(res.headers.get("X-Request-Id"));
  });

  it("carries them on 401 too", async () => {
    const res = await api("GET", "/v1/usage");
    expect(res.status).toBe(401);
    expect(res.body.data.request_id).toBe(res.headers.get("X-Request-Id"));
    expect(res.body.data.doc_url).toBe(`${ORIGIN}/docs/errors#AuthenticationRequired`);
  });
});

describe("resolution as a job echoes it", () => {
  it.each([480, "480"])("accepts %j and echoes the number", async (resolution) => {
    const { auth } = await createAccount({ plan: "starter" });
    const res = await api("POST", "/v1/jobs", {
      body: { url: URL, count: 3, resolution },
      headers: auth,
    });
    expect(res.status).toBe(201);
    expect(res.body.options.resolution).toBe(480);
    expect(res.body.requested_resolution).toBe(480);
  });

  it("accepts a job's own options posted back as a new request", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const first = await api("POST", "/v1/jobs", {
      body: { url: URL, count: 3, resolution: 720, format: "png", skip: ["black"] },
      headers: auth,
    });
    expect(first.status).toBe(201);
    const again = await api("POST", "/v1/jobs", {
      body: { url: first.body.url, ...first.body.options },
      headers: auth,
    });
    expect(again.status).toBe(201);
    expect(again.body.options).toEqual(first.body.options);
  });
});

describe("MCP tool errors", () => {
  it("carry every problem, the request id and the guide, as REST's do", async () => {
    const { auth } = await createAccount({ plan: "starter" });
    const response = await exports.default.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        "cf-connecting-ip": freshIp(),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        "X-Request-Id": "mcp-call-7",
        ...auth,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "extract_frames",
          arguments: { url: URL, fromat: "png", every: 0.05, format: "gif" },
        },
      }),
    });
    const text = await response.text();
    const message = text.includes("data: ")
      ? JSON.parse(
          text
            .split("\n")
            .find((line) => line.startsWith("data: "))
            ?.slice(6) ?? "{}",
        )
      : JSON.parse(text);
    const result = message.result;
    expect(result.isError).toBe(true);
    const body = result.structuredContent;
    expect(body.data.name).toBe("InvalidRequest");
    expect(body.data.errors.map((e: { param: string }) => e.param)).toEqual([
      "every",
      "format",
      "fromat",
    ]);
    expect(body.data.request_id).toBe("mcp-call-7");
    expect(body.data.doc_url).toBe(`${ORIGIN}/docs/errors#InvalidRequest`);
    expect(result.content[0].text).toContain("format must be one of jpg, png or webp");
    expect(result.content[0].text).toContain("mcp-call-7");
  });
});
