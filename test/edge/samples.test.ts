// GET /samples/<name>: the sample videos the service serves itself (schema/samples.ts), from R2,
// seeded from the bundled copy, with byte ranges as the extractor reads sources.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import intro from "../../edge/samples/intro.mp4";
import { isServiceSample, sampleUrl } from "../../schema/samples.ts";
import { ORIGIN } from "./support/api.ts";

const SIZE = intro.byteLength;
const bundled = new Uint8Array(intro);

function get(path: string, headers: Record<string, string> = {}, method = "GET") {
  return exports.default.fetch(`${ORIGIN}${path}`, {
    method,
    headers: { "cf-connecting-ip": "198.51.100.77", ...headers },
  });
}

async function bytesOf(response: Response) {
  return new Uint8Array(await response.arrayBuffer());
}

describe("GET /samples/intro.mp4", () => {
  it("serves the bundled sample whole, as video/mp4 that accepts ranges, from its R2 copy", async () => {
    const res = await get("/samples/intro.mp4");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("content-length")).toBe(String(SIZE));
    expect(res.headers.get("etag")).toMatch(/^"/);
    const body = await bytesOf(res);
    expect(body).toEqual(bundled);
    // An MP4 whose index comes first (faststart), so a ranged reader needs no tail read.
    expect(new TextDecoder().decode(body.subarray(4, 8))).toBe("ftyp");
    expect(SIZE).toBeLessThan(2 * 1024 * 1024);
    const stored = await env.FILES.head("samples/intro.mp4");
    expect(stored?.size).toBe(SIZE);
    expect(stored?.customMetadata?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("answers ranges: a span, an open end, a suffix; 416 past the end; several ranges whole", async () => {
    const span = await get("/samples/intro.mp4", { range: "bytes=100-1123" });
    expect(span.status).toBe(206);
    expect(span.headers.get("content-range")).toBe(`bytes 100-1123/${SIZE}`);
    expect(span.headers.get("content-length")).toBe("1024");
    expect(await bytesOf(span)).toEqual(bundled.subarray(100, 1124));

    const open = await get("/samples/intro.mp4", { range: `bytes=${SIZE - 10}-` });
    expect(open.status).toBe(206);
    expect(open.headers.get("content-range")).toBe(`bytes ${SIZE - 10}-${SIZE - 1}/${SIZE}`);
    expect(await bytesOf(open)).toEqual(bundled.subarray(SIZE - 10));

    const beyond = await get("/samples/intro.mp4", { range: `bytes=${SIZE - 5}-${SIZE + 500}` });
    expect(beyond.status).toBe(206);
    expect(await bytesOf(beyond)).toEqual(bundled.subarray(SIZE - 5));

    const suffix = await get("/samples/intro.mp4", { range: "bytes=-16" });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get("content-range")).toBe(`bytes ${SIZE - 16}-${SIZE - 1}/${SIZE}`);
    expect(await bytesOf(suffix)).toEqual(bundled.subarray(SIZE - 16));

    const past = await get("/samples/intro.mp4", { range: `bytes=${SIZE}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${SIZE}`);
    await past.arrayBuffer();

    const several = await get("/samples/intro.mp4", { range: "bytes=0-1,10-11" });
    expect(several.status).toBe(200);
    expect((await bytesOf(several)).byteLength).toBe(SIZE);
  });

  it("answers HEAD without a body, 304 to its own ETag, and the whole file when If-Range names another copy", async () => {
    const head = await get("/samples/intro.mp4", {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(SIZE));
    expect((await bytesOf(head)).byteLength).toBe(0);
    const etag = head.headers.get("etag") ?? "";
    const cached = await get("/samples/intro.mp4", { "if-none-match": etag });
    expect(cached.status).toBe(304);
    const stale = await get("/samples/intro.mp4", { range: "bytes=0-9", "if-range": '"other"' });
    expect(stale.status).toBe(200);
    expect((await bytesOf(stale)).byteLength).toBe(SIZE);
    const fresh = await get("/samples/intro.mp4", { range: "bytes=0-9", "if-range": etag });
    expect(fresh.status).toBe(206);
    await fresh.arrayBuffer();
  });

  it("puts the bundled copy back when R2 holds another file under the sample's key", async () => {
    await env.FILES.put("samples/intro.mp4", "not the sample", {
      customMetadata: { sha256: "0".repeat(64) },
    });
    const res = await get("/samples/intro.mp4");
    expect(res.status).toBe(200);
    expect(await bytesOf(res)).toEqual(bundled);
    expect((await env.FILES.head("samples/intro.mp4"))?.size).toBe(SIZE);
  });

  it("answers 404 in the error shape for a name that is not a sample", async () => {
    for (const path of ["/samples/other.mp4", "/samples/intro.MP4", "/samples/"]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { data: { name: string } };
      expect(body.data.name, path).toBe("NotFound");
    }
  });
});

describe("isServiceSample", () => {
  const origin = "http://127.0.0.1:8787";
  it("is true for exactly a sample on the service's origin", () => {
    expect(sampleUrl(origin)).toBe("http://127.0.0.1:8787/samples/intro.mp4");
    expect(isServiceSample(sampleUrl(origin), origin)).toBe(true);
    expect(isServiceSample(sampleUrl(origin), `${origin}/`)).toBe(true);
    for (const url of [
      "http://127.0.0.1:8787/samples/intro.mp4?x=1",
      "http://127.0.0.1:8787/samples/intro.mp4#t=3",
      "http://127.0.0.1:8787/samples/../v1/usage",
      "http://127.0.0.1:8787/samples/%2e%2e/v1/usage",
      "http://127.0.0.1:8787/samples/intro.mp4/",
      "http://127.0.0.1:8788/samples/intro.mp4",
      "http://localhost:8787/samples/intro.mp4",
      "https://127.0.0.1:8787/samples/intro.mp4",
      "http://a@127.0.0.1:8787/samples/intro.mp4",
      "http://127.0.0.1:8787/samples/secret.mp4",
      "not a url",
    ]) {
      expect(isServiceSample(url, origin), url).toBe(false);
    }
  });
});
