// Links are judged at creation: platform detection, address rules, and for a direct link
// without a video extension, a HEAD request whose answer must say video.
import { describe, expect, it } from "vitest";
import { api, createAccount } from "./support/api.ts";
import { setOutbound } from "./support/fake-extractor.ts";

async function create(url: string) {
  const account = await createAccount();
  return api("POST", "/v1/jobs", { body: { url, count: 1 }, headers: account.auth });
}

describe("a direct link without a video extension", () => {
  it("is accepted when its answer says video, after following redirects", async () => {
    const seen: string[] = [];
    setOutbound((request) => {
      seen.push(`${request.method} ${request.url} ${request.redirect}`);
      if (request.url === "https://cdn.example.com/v/123") {
        return new Response(null, { status: 302, headers: { location: "/blob/abc?sig=x" } });
      }
      return new Response(null, { headers: { "content-type": "video/mp4" } });
    });
    const res = await create("https://cdn.example.com/v/123");
    expect(res.status).toBe(201);
    expect(res.body.platform).toBe("direct");
    expect(seen).toEqual([
      "HEAD https://cdn.example.com/v/123 manual",
      "HEAD https://cdn.example.com/blob/abc?sig=x manual",
    ]);
  });

  it.each([
    [
      "an HTML page",
      () => new Response(null, { headers: { "content-type": "text/html" } }),
      "not a video file",
    ],
    ["a 404", () => new Response(null, { status: 404 }), "HTTP 404"],
    [
      "a redirect to a private address",
      () => new Response(null, { status: 301, headers: { location: "http://10.0.0.7/v.mp4" } }),
      "redirect of the link was refused",
    ],
    [
      "endless redirects",
      () => new Response(null, { status: 302, headers: { location: "/again" } }),
      "more than 5 times",
    ],
  ])("is refused with 400 InvalidUrl when it is %s", async (_label, answer, reason) => {
    setOutbound(answer);
    const res = await create("https://files.example.com/download?id=42");
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidUrl");
    expect(res.body.message).toContain(reason);
  });
});

it("does not ask a link with a video extension or a platform link", async () => {
  let asked = 0;
  setOutbound(() => {
    asked++;
    return new Response(null, { status: 500 });
  });
  expect((await create("https://cdn.example.com/a/talk.webm")).status).toBe(201);
  expect((await create("https://vimeo.com/76979871")).status).toBe(201);
  expect(asked).toBe(0);
});
