// Links are judged at creation by their form: platform detection and address rules, and no
// request to the link (the extractor is the one that fetches it).
import { expect, it } from "vitest";
import { api, createAccount } from "./support/api.ts";
import { setOutbound } from "./support/fake-extractor.ts";

async function create(url: string) {
  const account = await createAccount();
  return api("POST", "/v1/jobs", { body: { url, count: 1 }, headers: account.auth });
}

// The edge never fetches a link (decision 0260): whether a direct link is a video is the
// extractor's to find out, and its InvalidUrl is checked in test/sources/open-source.test.ts
// and test/e2e/direct-links.test.ts.
it("accepts a direct link without a video extension without asking it", async () => {
  let asked = 0;
  setOutbound(() => {
    asked++;
    return new Response(null, { headers: { "content-type": "text/html" } });
  });
  for (const url of ["https://cdn.example.com/v/123", "https://files.example.com/download?id=42"]) {
    const res = await create(url);
    expect(res.status).toBe(201);
    expect(res.body.platform).toBe("direct");
    expect(res.body.url).toBe(url);
  }
  expect(asked).toBe(0);
});

it("still refuses a direct link by its form and address, before any request", async () => {
  let asked = 0;
  setOutbound(() => {
    asked++;
    return new Response(null, { status: 500 });
  });
  for (const [url, reason] of [
    ["http://10.0.0.7/v", "private"],
    ["https://github.com/owner/repo", "not a supported video source"],
    ["ftp://files.example.com/v.mp4", "only http and https"],
  ]) {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body.data.name).toBe("InvalidUrl");
    expect(res.body.message).toContain(reason);
  }
  expect(asked).toBe(0);
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
