// Hostile HLS playlists (decision 0330): every URI a playlist names is judged by the address
// rules before any is fetched, and bounded playlists refuse chains, loops, and size. The public
// origin plays on 127.0.0.2; 127.0.0.1 stays private, and its server's log must stay empty.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { OpenSourceOptions } from "../../extractor/sources/index.ts";
import { openSource, SourceError } from "../../extractor/sources/index.ts";
import { PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { startTestServer } from "./support/servers.ts";

let origin: TestServer;
let privateHost: TestServer;

const options = (): OpenSourceOptions => ({
  resolution: 720,
  allowPrivate: false,
  policy: testPolicy(),
  maxBytes: 50_000_000,
  deadlineMs: 20_000,
});

function serve(path: string, text: string, contentType = "application/vnd.apple.mpegurl") {
  origin.route(path, (_req, res) => res.writeHead(200, { "content-type": contentType }).end(text));
}

const MEDIA_HEAD = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD";

async function refusal(path: string): Promise<SourceError> {
  const error = await openSource(`${origin.origin}${path}`, "direct", options()).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceError);
  return error as SourceError;
}

beforeAll(async () => {
  origin = await startTestServer(PUBLIC_LOOPBACK);
  privateHost = await startTestServer();
  privateHost.route("/seg0.m4s", (_req, res) => res.end("secret"));
  privateHost.route("/key", (_req, res) => res.end("0123456789abcdef"));
  privateHost.route("/v.m3u8", (_req, res) => res.end(`${MEDIA_HEAD}\n#EXTINF:2,\nx.m4s\n`));
});

afterEach(() => {
  expect(privateHost.requests, "nothing was asked of the private address").toEqual([]);
});

afterAll(async () => {
  await origin?.close();
  await privateHost?.close();
});

describe("hostile HLS playlists are refused before any private fetch", () => {
  it("a segment on a private address", async () => {
    serve(
      "/private-segment.m3u8",
      `${MEDIA_HEAD}\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2,\nseg-public.m4s\n#EXTINF:2,\n${privateHost.origin}/seg0.m4s\n#EXT-X-ENDLIST\n`,
    );
    const error = await refusal("/private-segment.m3u8");
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
    // Not even the public init segment or first segment: the playlist was refused whole.
    expect(origin.requests.map((r) => r.url)).not.toContain("/init.mp4");
    expect(origin.requests.map((r) => r.url)).not.toContain("/seg-public.m4s");
  });

  it("a private segment in an MPEG-TS playlist, before even the first segment is fetched", async () => {
    serve(
      "/private-ts.m3u8",
      `${MEDIA_HEAD}\n#EXTINF:2,\nts-public0.ts\n#EXTINF:2,\nts-public1.ts\n#EXTINF:2,\n${privateHost.origin}/seg2.ts\n#EXT-X-ENDLIST\n`,
    );
    const error = await refusal("/private-ts.m3u8");
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
    expect(origin.requests.map((r) => r.url).filter((url) => url.endsWith(".ts"))).toEqual([]);
  });

  it("a key URI on a private address", async () => {
    serve(
      "/private-key.m3u8",
      `${MEDIA_HEAD}\n#EXT-X-KEY:METHOD=AES-128,URI="${privateHost.origin}/key"\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2,\nseg.m4s\n#EXT-X-ENDLIST\n`,
    );
    const error = await refusal("/private-key.m3u8");
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
  });

  it("an encrypted playlist on a public key is refused as encrypted, the key never fetched", async () => {
    serve(
      "/public-key.m3u8",
      `${MEDIA_HEAD}\n#EXT-X-KEY:METHOD=AES-128,URI="key.bin"\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2,\nseg.m4s\n#EXT-X-ENDLIST\n`,
    );
    const error = await refusal("/public-key.m3u8");
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain("its segments are encrypted (AES-128)");
    expect(origin.requests.map((r) => r.url)).not.toContain("/key.bin");
  });

  it("a variant on a private address, even one that would not be chosen", async () => {
    serve(
      "/private-variant.m3u8",
      [
        "#EXTM3U",
        "#EXT-X-STREAM-INF:BANDWIDTH=100000,RESOLUTION=640x360",
        "public.m3u8",
        "#EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=3840x2160",
        `${privateHost.origin}/v.m3u8`,
      ].join("\n"),
    );
    const error = await refusal("/private-variant.m3u8");
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
    expect(origin.requests.map((r) => r.url)).not.toContain("/public.m3u8");
  });

  it("variants that point at each other", async () => {
    serve("/a.m3u8", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=640x360\nb.m3u8\n");
    serve("/b.m3u8", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=640x360\na.m3u8\n");
    const before = origin.requests.length;
    const error = await refusal("/a.m3u8");
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain(
      "a variant is itself a master playlist (playlists that point at each other)",
    );
    // a.m3u8 (its first bytes, then whole), b.m3u8 once: no loop.
    const asked = origin.requests.slice(before).map((r) => r.url);
    expect(asked.filter((url) => url === "/b.m3u8")).toHaveLength(1);
    expect(asked.length).toBeLessThanOrEqual(3);
  });

  it("a variant that points back at its master", async () => {
    serve("/self.m3u8", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nself.m3u8\n");
    const error = await refusal("/self.m3u8");
    expect(error.message).toContain("a variant points back at it");
  });

  it("10 000 variants", async () => {
    const lines = ["#EXTM3U"];
    for (let i = 0; i < 10_000; i += 1) {
      lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${i + 1}`, `${privateHost.origin}/v${i}.m3u8`);
    }
    serve("/many.m3u8", lines.join("\n"));
    const error = await refusal("/many.m3u8");
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain("it lists more than 64 variants");
  });

  it("a playlist over the byte bound", async () => {
    const filler = "#EXT-X-DISCONTINUITY-SEQUENCE:0\n".repeat(150_000);
    serve("/huge.m3u8", `${MEDIA_HEAD}\n${filler}#EXTINF:2,\nseg.m4s\n#EXT-X-ENDLIST\n`);
    const error = await refusal("/huge.m3u8");
    expect(error.message).toContain("is over 4194304 bytes");
    expect(origin.requests.map((r) => r.url)).not.toContain("/seg.m4s");
  });

  it("a live playlist and a segment that is not MPEG-TS, each with its reason", async () => {
    serve("/live.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nlive0.m4s\n");
    expect((await refusal("/live.m3u8")).message).toContain("it is a live playlist");
    // No EXT-X-MAP: MPEG-TS segments (decision 0332), and this one is not.
    serve("/ts.m3u8", `${MEDIA_HEAD}\n#EXTINF:2,\nnot-ts.ts\n#EXT-X-ENDLIST\n`);
    serve("/not-ts.ts", "<html>not a segment</html>".repeat(20), "video/mp2t");
    const notTs = await refusal("/ts.m3u8");
    expect(notTs.name).toBe("InvalidUrl");
    expect(notTs.message).toContain(
      "segment 0 is not MPEG-TS that can be read: it is not MPEG-TS (no sync byte)",
    );
    const asked = origin.requests.map((r) => r.url);
    expect(asked.filter((url) => /\.m4s$/.test(url))).toEqual([]);
  });
});
