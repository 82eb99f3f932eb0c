import { stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedSource, OpenSourceOptions } from "../../extractor/sources/index.ts";
import { openSource, SourceError } from "../../extractor/sources/index.ts";
import { PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { fileRoute, startTestServer } from "./support/servers.ts";
import { brightnessVideo, meanLumaAt } from "./support/videos.ts";

let server: TestServer;
let longVideo: string;
let moovAtEnd: string;
let webm: string;
const originBytes = { ranged: 0, whole: 0 };

const lax: OpenSourceOptions = {
  resolution: 720,
  allowPrivate: true,
  maxBytes: 500_000_000,
  deadlineMs: 60_000,
};

beforeAll(async () => {
  longVideo = await brightnessVideo({ seconds: 12, width: 1280, height: 720, faststart: true });
  moovAtEnd = await brightnessVideo({ seconds: 12, width: 1280, height: 720, faststart: false });
  webm = await brightnessVideo({
    seconds: 4,
    width: 320,
    height: 240,
    faststart: false,
    container: "webm",
  });
  server = await startTestServer();
  server.route(
    "/ranged.mp4",
    fileRoute(longVideo, { ranges: true, onBytes: (n) => (originBytes.ranged += n) }),
  );
  server.route("/moov-end.mp4", fileRoute(moovAtEnd, { ranges: true }));
  server.route(
    "/whole.mp4",
    fileRoute(moovAtEnd, { ranges: false, onBytes: (n) => (originBytes.whole += n) }),
  );
  server.route("/clip.webm", fileRoute(webm, { ranges: true, contentType: "video/webm" }));
  server.route(
    "/no-extension",
    fileRoute(longVideo, { ranges: true, contentType: "application/octet-stream" }),
  );
  for (const status of [401, 403, 404, 410, 500, 503]) {
    server.route(`/status-${status}.mp4`, (_req, res) => res.writeHead(status).end("nope"));
  }
  server.route("/article", (_req, res) => {
    res
      .writeHead(200, { "content-type": "text/html" })
      .end("<!doctype html><title>News</title><p>No video here.</p>");
  });
  server.route("/player-page", (_req, res) => {
    res
      .writeHead(200, { "content-type": "text/html" })
      .end('<!doctype html><title>Show</title><div class="player">Coming soon</div>');
  });
  server.route("/notes.txt", (_req, res) =>
    res.writeHead(200, { "content-type": "text/plain" }).end("hello"),
  );
  server.route("/video-page", (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(
      `<!doctype html><html><head><title>Clip</title></head><body><video src="/ranged.mp4" controls></video></body></html>`,
    );
  });
  server.route("/og-page", (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(
      `<!doctype html><html><head><title>Og</title><meta property="og:video" content="${server.origin}/clip.webm"><meta property="og:video:type" content="video/webm"></head><body>hi</body></html>`,
    );
  });
  // A Drive look-alike: the download URL answers with the virus-scan page until confirmed.
  server.route("/download", (req, res) => {
    const params = new URL(req.url ?? "", server.origin).searchParams;
    if (
      params.get("uuid") === "u-123" &&
      params.get("confirm") === "t" &&
      params.get("id") === "FILE1"
    ) {
      return fileRoute(longVideo, { ranges: true })(req, res);
    }
    if (params.get("id") === "QUOTA") {
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(
          "<html><title>Google Drive - Quota exceeded</title>Too many users have viewed or downloaded this file recently.</html>",
        );
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!DOCTYPE html><html><head><title>Google Drive - Virus scan warning</title></head><body>
      <p>Google Drive can't scan this file for viruses.</p>
      <form id="download-form" action="${server.origin}/download" method="get">
        <input type="submit" id="uc-download-link" value="Download anyway"/>
        <input type="hidden" name="id" value="${params.get("id")}">
        <input type="hidden" name="export" value="download">
        <input type="hidden" name="confirm" value="t">
        <input type="hidden" name="uuid" value="u-123">
      </form></body></html>`);
  });
});

afterAll(async () => {
  await server?.close();
});

async function failureOf(promise: Promise<OpenedSource>): Promise<SourceError> {
  const outcome = await promise.then(
    async (source) => {
      await source.close();
      return null;
    },
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(SourceError);
  return outcome as SourceError;
}

describe("openSource, direct links", () => {
  it("serves a ranged origin through the relay and reads only the spans ffmpeg needs", async () => {
    const { size } = await stat(longVideo);
    originBytes.ranged = 0;
    const source = await openSource(`${server.origin}/ranged.mp4`, "direct", lax);
    try {
      expect(source.input).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}$/);
      expect(source.contentLength).toBe(size);
      expect(await meanLumaAt(source.input, 10.5)).toBeCloseTo(200, -1);
      // The origin may have sent a little more than arrived: what was in flight when ffmpeg seeked.
      expect(originBytes.ranged).toBeGreaterThanOrEqual(source.bytesRead());
      expect(originBytes.ranged).toBeLessThan(source.bytesRead() + 1024 * 1024);
      expect(source.bytesRead()).toBeLessThan(size * 0.6);
      expect(server.requests.filter((r) => r.url === "/ranged.mp4").every((r) => r.range)).toBe(
        true,
      );
    } finally {
      await source.close();
    }
  });

  it("reads a file whose moov index sits at the end", async () => {
    const source = await openSource(`${server.origin}/moov-end.mp4`, "direct", lax);
    try {
      expect(await meanLumaAt(source.input, 3.5)).toBeCloseTo(60, -1);
      expect(await meanLumaAt(source.input, 8.2)).toBeCloseTo(160, -1);
    } finally {
      await source.close();
    }
  });

  it("downloads an origin without range support once and serves every seek from it", async () => {
    const { size } = await stat(moovAtEnd);
    originBytes.whole = 0;
    const source = await openSource(`${server.origin}/whole.mp4`, "direct", lax);
    try {
      expect(await meanLumaAt(source.input, 1.5)).toBeCloseTo(20, -1);
      expect(await meanLumaAt(source.input, 11.5)).toBeCloseTo(220, -1);
      expect(originBytes.whole).toBe(size);
      expect(source.bytesRead()).toBe(size);
    } finally {
      await source.close();
    }
  });

  it("accepts a link without extension whose bytes are a video, and a webm", async () => {
    for (const path of ["/no-extension", "/clip.webm"]) {
      const source = await openSource(`${server.origin}${path}`, "direct", lax);
      try {
        expect(await meanLumaAt(source.input, 2.5)).toBeCloseTo(40, -1);
      } finally {
        await source.close();
      }
    }
  });

  // 404 and 410 stay PrivateContent (the spec's rule) but say the link was not found; only a
  // busy or failing server is worth trying again.
  it.each([
    [401, "PrivateContent", /private, deleted or needs a login/],
    [403, "PrivateContent", /private, deleted or needs a login/],
    [404, "PrivateContent", /^This link was not found/],
    [410, "PrivateContent", /^This link was not found/],
    [500, "DownloadFailed", /HTTP 500\)\. Please try again later\.$/],
    [503, "DownloadFailed", /HTTP 503\)\. Please try again later\.$/],
  ])("maps HTTP %i to %s, in words that say why", async (status, name, userMessage) => {
    const error = await failureOf(
      openSource(`${server.origin}/status-${status}.mp4`, "direct", lax),
    );
    expect(error.name).toBe(name);
    expect(error.message).toContain(String(status));
    expect(error.userMessage).toMatch(userMessage);
    if (status === 404 || status === 410) expect(error.message).toMatch(/not found/);
    if (status < 500) expect(error.userMessage).not.toMatch(/try again/i);
  });

  // The caller's own link that is no video is a wrong link: InvalidUrl, as the edge said with
  // 400 when it still asked at creation (decision 0260).
  it("fails an HTML page without a video with InvalidUrl, without starting yt-dlp", async () => {
    const error = await failureOf(
      openSource(`${server.origin}/article`, "direct", { ...lax, ytDlpBinary: "/nonexistent" }),
    );
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain("not a video file (a page without a video)");
    expect(error.userMessage).toBe("That link isn't a supported public video URL.");
    // The page named no video, so no yt-dlp ran (a missing binary would fail otherwise).
    expect(error.message).not.toMatch(/yt-dlp/);
  });

  it("fails a page that looks like a player but holds no video with InvalidUrl", async () => {
    const error = await failureOf(openSource(`${server.origin}/player-page`, "direct", lax));
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain("not a video file (a page without a video: yt-dlp");
  });

  it("fails a text answer with InvalidUrl, naming its content type", async () => {
    const error = await failureOf(openSource(`${server.origin}/notes.txt`, "direct", lax));
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain("text/plain");
  });

  it("refuses loopback and odd ports without STILLS_ALLOW_PRIVATE_NETWORK", async () => {
    const strict = { ...lax, allowPrivate: false };
    const before = server.requests.length;
    const loopback = await failureOf(openSource("http://127.0.0.1/ranged.mp4", "direct", strict));
    expect(loopback.message).toContain("127.0.0.1 is a loopback address");
    const port = await failureOf(openSource(`${server.origin}/ranged.mp4`, "direct", strict));
    expect(port.message).toContain(`port ${server.port} is not allowed`);
    expect(server.requests.length).toBe(before);
  });

  it("stops a ranged source at the byte cap", async () => {
    const { size } = await stat(longVideo);
    const maxBytes = Math.floor(size / 8);
    const source = await openSource(`${server.origin}/ranged.mp4`, "direct", { ...lax, maxBytes });
    try {
      const outcomes = [];
      for (const seconds of [1, 6, 11.5]) {
        outcomes.push(
          await meanLumaAt(source.input, seconds).then(
            () => "ok",
            () => "failed",
          ),
        );
      }
      expect(outcomes).toContain("failed");
      expect(source.failure()?.message).toContain(`${maxBytes}-byte limit`);
      expect(source.bytesRead()).toBeLessThan(maxBytes + 4 * 1024 * 1024);
    } finally {
      await source.close();
    }
  });

  it("refuses a file over the byte cap from an origin that cannot send parts", async () => {
    const { size } = await stat(moovAtEnd);
    const error = await failureOf(
      openSource(`${server.origin}/whole.mp4`, "direct", { ...lax, maxBytes: size - 1 }),
    );
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toContain(`${size - 1}-byte limit`);
  });

  it("fails with DownloadFailed when the deadline passes", async () => {
    server.route("/slow.mp4", () => {});
    const started = Date.now();
    const error = await failureOf(
      openSource(`${server.origin}/slow.mp4`, "direct", { ...lax, deadlineMs: 400 }),
    );
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toContain("400 ms");
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe("openSource, pages resolved by yt-dlp's generic extractor", () => {
  it("finds a <video src> on a page", async () => {
    const source = await openSource(`${server.origin}/video-page`, "direct", lax);
    try {
      expect(await meanLumaAt(source.input, 5.5)).toBeCloseTo(100, -1);
    } finally {
      await source.close();
    }
  });

  it("finds an og:video on a page", async () => {
    const source = await openSource(`${server.origin}/og-page`, "direct", lax);
    try {
      expect(await meanLumaAt(source.input, 3.5)).toBeCloseTo(60, -1);
    } finally {
      await source.close();
    }
  });

  it("refuses a page whose video lives at a private address", async () => {
    const publicHost = await startTestServer(PUBLIC_LOOPBACK);
    publicHost.route("/page", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><html><body><video src="${server.origin}/ranged.mp4"></video></body></html>`,
      );
    });
    const before = server.requests.length;
    try {
      const error = await failureOf(
        openSource(`${publicHost.origin}/page`, "direct", {
          ...lax,
          allowPrivate: false,
          policy: testPolicy(),
        }),
      );
      expect(error.name).toBe("DownloadFailed");
      expect(error.message).toContain("127.0.0.1 is a loopback address");
      expect(server.requests.length).toBe(before);
      expect(publicHost.requests.filter((r) => r.url === "/page").length).toBeGreaterThanOrEqual(2);
    } finally {
      await publicHost.close();
    }
  });

  it("does not let yt-dlp itself reach a private address, even through a redirect", async () => {
    const publicHost = await startTestServer(PUBLIC_LOOPBACK);
    publicHost.route("/hop", (_req, res) =>
      res.writeHead(302, { location: `${server.origin}/video-page` }).end(),
    );
    const before = server.requests.length;
    try {
      const error = await failureOf(
        openSource(`${publicHost.origin}/hop`, "vimeo", {
          ...lax,
          allowPrivate: false,
          policy: testPolicy(),
        }),
      );
      expect(error.name).toBe("DownloadFailed");
      expect(error.message).toContain("127.0.0.1 is a loopback address");
      expect(publicHost.requests.some((r) => r.url === "/hop")).toBe(true);
      expect(server.requests.length).toBe(before);
    } finally {
      await publicHost.close();
    }
  });
});

describe("openSource, Google Drive", () => {
  it("follows the virus-scan confirmation form to the file", async () => {
    const source = await openSource(
      `${server.origin}/download?id=FILE1&export=download`,
      "google_drive",
      lax,
    );
    try {
      expect(await meanLumaAt(source.input, 7.5)).toBeCloseTo(140, -1);
      const confirmed = server.requests.filter((r) => r.url.includes("uuid=u-123"));
      expect(confirmed.length).toBeGreaterThan(0);
    } finally {
      await source.close();
    }
  });

  it("reports Drive's download quota as DownloadFailed with its own message", async () => {
    const error = await failureOf(
      openSource(`${server.origin}/download?id=QUOTA`, "google_drive", lax),
    );
    expect(error.name).toBe("DownloadFailed");
    expect(error.userMessage).toContain("Google Drive");
  });
});
