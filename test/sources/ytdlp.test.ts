import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { YtDlpFormat } from "../../extractor/sources/format-choice.ts";
import { chooseFormat, cookieHeader } from "../../extractor/sources/format-choice.ts";
import { parseMediaPlaylist } from "../../extractor/sources/hls-origin.ts";
import type { OpenSourceOptions } from "../../extractor/sources/index.ts";
import { openSource, SourceError } from "../../extractor/sources/index.ts";
import { classifyYtDlpFailure } from "../../extractor/sources/ytdlp.ts";
import { PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { fileRoute, startTestServer } from "./support/servers.ts";
import { brightnessVideo, meanLumaAt } from "./support/videos.ts";

const run = promisify(execFile);

const fmt = (
  id: string,
  width: number,
  height: number,
  extra: Partial<YtDlpFormat> = {},
): YtDlpFormat => ({
  format_id: id,
  url: `https://media.example/${id}`,
  protocol: "https",
  vcodec: "avc1.4d401f",
  acodec: "none",
  width,
  height,
  ...extra,
});

describe("chooseFormat", () => {
  const ladder = [
    fmt("audio", 0, 0, { vcodec: "none", acodec: "mp4a", width: null, height: null }),
    fmt("360", 640, 360),
    fmt("720-av1", 1280, 720, { vcodec: "av01.0.05M.08" }),
    fmt("720", 1280, 720),
    fmt("1080", 1920, 1080),
    fmt("1080-hls", 1920, 1080, { protocol: "m3u8_native" }),
    fmt("2160-hls", 3840, 2160, { protocol: "m3u8_native" }),
  ];

  it("picks the largest short side not above the request, preferring H.264", () => {
    const choice = chooseFormat(ladder, 720);
    expect(choice).toMatchObject({ format: { format_id: "720" }, shortSide: 720, note: null });
  });

  it("explains a fallback when the source is smaller than asked", () => {
    const choice = chooseFormat(ladder.slice(0, 5), 2160);
    expect(choice).toMatchObject({ format: { format_id: "1080" }, shortSide: 1080 });
    if (typeof choice === "object") expect(choice.note).toContain("1080p (1920×1080)");
  });

  it("prefers a plain file to HLS at the same size, and takes HLS when it is the larger fit", () => {
    expect(chooseFormat(ladder, 1080)).toMatchObject({ format: { format_id: "1080" } });
    expect(chooseFormat(ladder, 2160)).toMatchObject({
      format: { format_id: "2160-hls" },
      note: null,
    });
  });

  it("measures portrait videos by their short side", () => {
    const portrait = [fmt("p720", 720, 1280), fmt("p1080", 1080, 1920)];
    expect(chooseFormat(portrait, 720)).toMatchObject({
      format: { format_id: "p720" },
      note: null,
    });
  });

  it("takes the smallest version when all are larger than asked", () => {
    expect(chooseFormat([fmt("1080", 1920, 1080), fmt("720", 1280, 720)], 240)).toMatchObject({
      format: { format_id: "720" },
      note: null,
    });
  });

  it("takes the last (best) version when sizes are unknown", () => {
    const unknown = [
      { url: "https://a/1.mp4", ext: "mp4" },
      { url: "https://a/2.mp4", ext: "mp4" },
    ];
    expect(chooseFormat(unknown, 720)).toMatchObject({ format: { url: "https://a/2.mp4" } });
  });

  it("names the problem when there is no video or only streaming versions", () => {
    expect(chooseFormat([ladder[0]], 720)).toBe("no-video");
    expect(chooseFormat([fmt("dash", 1280, 720, { protocol: "http_dash_segments" })], 720)).toBe(
      "streaming-only",
    );
    expect(chooseFormat([{ url: "file:///etc/passwd", ext: "mp4" }], 720)).toBe("no-video");
  });

  it("turns yt-dlp's cookies field into a Cookie header", () => {
    expect(
      cookieHeader("tt_chain=abc; Domain=.tiktok.com; Path=/; Secure; Expires=1700000000; sid=9"),
    ).toBe("tt_chain=abc; sid=9");
  });
});

describe("parseMediaPlaylist", () => {
  const base = new URL("https://cdn.example/v/index.m3u8");

  it("lists the init segment and the segments, with byte ranges", () => {
    const text = [
      "#EXTM3U",
      '#EXT-X-MAP:URI="init.mp4",BYTERANGE="800@0"',
      "#EXTINF:2,",
      "#EXT-X-BYTERANGE:1000@800",
      "all.mp4",
      "#EXTINF:2,",
      "#EXT-X-BYTERANGE:500",
      "all.mp4",
      "#EXTINF:2,",
      "https://other.example/seg3.m4s",
      "#EXT-X-ENDLIST",
    ].join("\n");
    expect(parseMediaPlaylist(text, base).map((p) => [p.url.href, p.range])).toEqual([
      ["https://cdn.example/v/init.mp4", { length: 800, offset: 0 }],
      ["https://cdn.example/v/all.mp4", { length: 1000, offset: 800 }],
      ["https://cdn.example/v/all.mp4", { length: 500, offset: 1800 }],
      ["https://other.example/seg3.m4s", null],
    ]);
  });

  it("refuses encrypted and master playlists", () => {
    expect(() =>
      parseMediaPlaylist('#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI="k"\na.ts', base),
    ).toThrow(/encrypted/);
    expect(() =>
      parseMediaPlaylist("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8", base),
    ).toThrow(/master/);
  });
});

describe("classifyYtDlpFailure", () => {
  it.each([
    [
      "ERROR: [youtube] abc: Private video. Sign in if you've been granted access to this video",
      "PrivateContent",
    ],
    [
      "ERROR: [youtube] abc: Sign in to confirm your age. This video may be inappropriate for some users.",
      "PrivateContent",
    ],
    [
      "ERROR: [youtube] abc: Video unavailable. This video has been removed by the uploader",
      "PrivateContent",
    ],
    [
      "ERROR: [instagram] abc: Requested content is not available, rate-limit reached or login required. Use --cookies",
      "PrivateContent",
    ],
    [
      "ERROR: [TikTok] 123: Unable to download webpage: HTTP Error 404: Not Found",
      "PrivateContent",
    ],
    [
      "ERROR: [vimeo] 1: Unable to download JSON metadata: HTTP Error 403: Forbidden",
      "PrivateContent",
    ],
    ["ERROR: [twitter] 123: No video could be found in this tweet", "NoVideoFound"],
    ["ERROR: Unsupported URL: https://example.com/blog", "NoVideoFound"],
    ["ERROR: [generic] page: No video formats found!", "NoVideoFound"],
    [
      "ERROR: [vimeo] 1: Unable to download webpage: <urlopen error [Errno 111] Connection refused>",
      "DownloadFailed",
    ],
    [
      "ERROR: [facebook] 1: Unable to download webpage: HTTP Error 500: Internal Server Error",
      "DownloadFailed",
    ],
    [
      "ERROR: [youtube] abc: Unable to download API page: The read operation timed out",
      "DownloadFailed",
    ],
  ])("%s → %s", (stderr, name) => {
    expect(classifyYtDlpFailure(`WARNING: something\n${stderr}\n`).name).toBe(name);
  });

  // A deleted or unknown post stays PrivateContent, said as "not found"; "try again" only for
  // what a retry can fix.
  it.each([
    ["ERROR: [TikTok] 123: Unable to download webpage: HTTP Error 404: Not Found", /not found/],
    ["ERROR: [youtube] abc: Video unavailable. This video has been removed", /not found/],
    ["ERROR: [youtube] abc: Private video. Sign in if you've been granted access", /private/],
    [
      "ERROR: [youtube] abc: Unable to download API page: The read operation timed out",
      /try again/,
    ],
    ["ERROR: [generic] x: only DASH", /^The video could not be downloaded from this link\.$/],
  ])("words %s as %s", (stderr, words) => {
    const error = classifyYtDlpFailure(`${stderr}\n`);
    expect(error.userMessage).toMatch(words);
    if (/not found/.source === words.source) {
      expect(error.name).toBe("PrivateContent");
      expect(error.message).toMatch(/not found/);
    }
    if (!/timed out/.test(stderr)) expect(error.userMessage).not.toMatch(/try again/i);
  });
});

/** "gone", or the state letter from /proc (Z: killed, waiting for a parent that never reaps). */
async function processState(pid: number): Promise<string> {
  try {
    return (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].charAt(0);
  } catch {
    return "gone";
  }
}

describe("openSource with yt-dlp (a stand-in binary that prints what a platform would)", () => {
  let server: TestServer;
  let directory: string;
  const seenHeaders: Record<string, string | undefined> = {};

  beforeAll(async () => {
    const video = await brightnessVideo({ seconds: 12, width: 1280, height: 720, faststart: true });
    server = await startTestServer();
    for (const id of ["360", "720", "1080"]) {
      const serve = fileRoute(video, { ranges: true });
      server.route(`/fmt-${id}.mp4`, (req, res) => {
        seenHeaders[id] = req.headers["x-platform-token"] as string | undefined;
        return serve(req, res);
      });
    }
    directory = await mkdtemp(join(tmpdir(), "stills-fake-ytdlp-"));
  });

  afterAll(async () => {
    await server?.close();
  });

  async function fakeYtDlp(name: string, body: string): Promise<string> {
    const path = join(directory, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
    return path;
  }

  const options = (binary: string, resolution = 720): OpenSourceOptions => ({
    resolution,
    allowPrivate: true,
    maxBytes: 100_000_000,
    deadlineMs: 30_000,
    ytDlpBinary: binary,
  });

  it("fetches the chosen version with yt-dlp's headers, through its proxy argument", async () => {
    const formats = ["360", "720", "1080"].map((id) => ({
      ...fmt(id, (Number(id) * 16) / 9, Number(id)),
      url: `${server.origin}/fmt-${id}.mp4`,
      http_headers: { "X-Platform-Token": `token-${id}`, "User-Agent": "Mozilla/5.0" },
    }));
    const infoPath = join(directory, "info.json");
    await writeFile(infoPath, JSON.stringify({ id: "abc", formats }));
    const binary = await fakeYtDlp(
      "prints-formats",
      `printf '%s\\n' "$@" > "${directory}/args.txt"; env > "${directory}/env.txt"; cat "${infoPath}"`,
    );
    const source = await openSource(
      "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
      "youtube",
      options(binary, 2160),
    );
    try {
      expect(source.resolutionNote).toContain("largest version this source offers is 1080p");
      expect(await meanLumaAt(source.input, 4.5)).toBeCloseTo(80, -1);
      expect(seenHeaders["1080"]).toBe("token-1080");
      expect(seenHeaders["720"]).toBeUndefined();
    } finally {
      await source.close();
    }
    const args = (await readFile(join(directory, "args.txt"), "utf8")).split("\n");
    expect(args[args.indexOf("--proxy") + 1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(args).toContain("--ignore-config");
    expect(args.slice(-3, -1)).toEqual(["--", "https://www.youtube.com/watch?v=dQw4w9WgXcQ"]);
    const env = await readFile(join(directory, "env.txt"), "utf8");
    expect(env).not.toMatch(/^(no_proxy|NO_PROXY|http_proxy|HTTPS_PROXY)=/m);
  });

  it("reads an HLS (fMP4) VOD version a segment at a time (decision 0330)", async () => {
    const video = await brightnessVideo({ seconds: 12, width: 1280, height: 720, faststart: true });
    const hlsDir = join(directory, "hls");
    await mkdir(hlsDir, { recursive: true });
    await run("ffmpeg", [
      "-v",
      "error",
      "-y",
      "-i",
      video,
      "-c",
      "copy",
      "-f",
      "hls",
      "-hls_time",
      "2",
      "-hls_segment_type",
      "fmp4",
      "-hls_playlist_type",
      "vod",
      join(hlsDir, "index.m3u8"),
    ]);
    for (const name of await readdir(hlsDir)) {
      server.route(
        `/hls/${name}`,
        fileRoute(join(hlsDir, name), { ranges: false, contentType: "application/octet-stream" }),
      );
    }
    const infoPath = join(directory, "hls-info.json");
    const format = fmt("hls-720", 1280, 720, {
      protocol: "m3u8_native",
      url: `${server.origin}/hls/index.m3u8`,
    });
    await writeFile(infoPath, JSON.stringify({ formats: [format] }));
    const binary = await fakeYtDlp("prints-hls", `cat "${infoPath}"`);
    const source = await openSource("https://vimeo.com/76979871", "vimeo", options(binary));
    try {
      expect(await meanLumaAt(source.input, 7.5)).toBeCloseTo(140, -1);
      const segments = server.requests.filter(
        (r) => r.url.startsWith("/hls/") && r.url.endsWith(".m4s"),
      );
      // Not all six: the first two for the probe (ffmpeg reads 20 frames, 2 s at 10 fps, to
      // judge the frame rate) and the one 7.5 s lies in.
      expect(segments.map((r) => r.url).sort()).toEqual([
        "/hls/index0.m4s",
        "/hls/index1.m4s",
        "/hls/index3.m4s",
      ]);
    } finally {
      await source.close();
    }
  });

  it("refuses an HLS segment at a private address", async () => {
    const publicHost = await startTestServer(PUBLIC_LOOPBACK);
    publicHost.route("/index.m3u8", (_req, res) => {
      res.end(`#EXTM3U\n#EXTINF:2,\n${server.origin}/hls/index0.m4s\n#EXT-X-ENDLIST\n`);
    });
    const infoPath = join(directory, "hls-private.json");
    const format = fmt("hls", 1280, 720, {
      protocol: "m3u8_native",
      url: `${publicHost.origin}/index.m3u8`,
    });
    await writeFile(infoPath, JSON.stringify({ formats: [format] }));
    const binary = await fakeYtDlp("prints-hls-private", `cat "${infoPath}"`);
    const before = server.requests.length;
    const error = await openSource("https://vimeo.com/1", "vimeo", {
      ...options(binary),
      allowPrivate: false,
      policy: testPolicy(),
    }).catch((e: unknown) => e);
    try {
      // Refused while the playlist is read, before any segment is asked for.
      expect((error as Error).message).toBe("refused destination: 127.0.0.1 is a loopback address");
      expect(server.requests.length).toBe(before);
    } finally {
      await publicHost.close();
    }
  });

  it("maps a failing run by its error line", async () => {
    const binary = await fakeYtDlp(
      "private",
      `echo "ERROR: [youtube] dQw4w9WgXcQ: Private video. Sign in if you've been granted access" >&2; exit 1`,
    );
    const error = await openSource(
      "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
      "youtube",
      options(binary),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).name).toBe("PrivateContent");
  });

  it("kills yt-dlp's whole process group at the deadline", async () => {
    const pidFile = join(directory, "child.pid");
    const binary = await fakeYtDlp("hangs", `sleep 60 & echo $! > "${pidFile}"; sleep 60`);
    const started = Date.now();
    const error = await openSource("https://vimeo.com/76979871", "vimeo", {
      ...options(binary),
      deadlineMs: 700,
    }).catch((e: unknown) => e);
    expect((error as SourceError).name).toBe("DownloadFailed");
    expect(Date.now() - started).toBeLessThan(5000);
    const grandchild = Number(await readFile(pidFile, "utf8"));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await processState(grandchild)).toMatch(/^(gone|Z)$/);
  });

  it("refuses a media URL that points at a private address", async () => {
    const infoPath = join(directory, "private-info.json");
    await writeFile(
      infoPath,
      JSON.stringify({
        formats: [fmt("m", 1280, 720, { url: "http://169.254.169.254/latest/meta-data/" })],
      }),
    );
    const binary = await fakeYtDlp("metadata", `cat "${infoPath}"`);
    const error = await openSource("https://x.com/i/status/1", "x", {
      ...options(binary),
      allowPrivate: false,
    }).catch((e: unknown) => e);
    expect((error as SourceError).message).toContain("169.254.169.254 is a link-local address");
  });
});
