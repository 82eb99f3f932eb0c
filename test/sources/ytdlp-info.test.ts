// yt-dlp's info and subtitle files, as yt-dlp writes them (test/fixtures/ytdlp/, modelled on its
// --dump-single-json output for a YouTube video and YouTube's WebVTT), mapped to job.video and
// to captions; then the whole path with a stand-in yt-dlp that prints the fixture: the caption
// file is fetched by us through the source's checks and budget, and lands on each frame.
process.env.EXTRACTOR_LOG ??= "silent";

import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_CAPTIONS_NOTE } from "../../extractor/context/captions.ts";
import {
  CaptionsError,
  captionAt,
  decodeSubtitleBytes,
  parseCues,
  writeWebVtt,
} from "../../extractor/context/cues.ts";
import { choosePlatformTrack } from "../../extractor/context/platform.ts";
import { describeVideo } from "../../extractor/context/video.ts";
import { extractFrames } from "../../extractor/job.ts";
import { DirectorySink } from "../../extractor/output/directory-sink.ts";
import type { OpenSourceOptions } from "../../extractor/sources/index.ts";
import { openSource } from "../../extractor/sources/index.ts";
import { platformInfo } from "../../extractor/sources/ytdlp.ts";
import { MAX_CAPTION_CHARS } from "../../schema/api.ts";
import { PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { fileRoute, startTestServer } from "./support/servers.ts";

const run = promisify(execFile);
const FIXTURES = join(import.meta.dirname, "../fixtures/ytdlp");
const fixture = (name: string) => readFile(join(FIXTURES, name), "utf8");
const infoFixture = async (name: string) => JSON.parse(await fixture(name));

// The plain text of each cue in en.vtt and en-orig.vtt, written out by hand.
const UPLOADER_CUES = [
  { start: 0.5, end: 2, text: "Welcome to the <caption> tests" },
  { start: 2, end: 3.5, text: "Fish & chips\non the second line" },
  { start: 4, end: 5, text: "Last words" },
];
const AUTOMATIC_CUES = [
  { start: 0, end: 2.59, text: "welcome to the tests" },
  { start: 2.59, end: 2.6, text: "welcome to the tests" },
  { start: 2.6, end: 5, text: "welcome to the tests\nfish and chips" },
];

describe("yt-dlp's info → job.video", () => {
  it("maps title, uploader, channel, upload date, views and page URL beside the probe's facts", async () => {
    const info = platformInfo(await infoFixture("youtube-info.json"));
    const probe = {
      formatName: "mov,mp4,m4a,3gp,3g2,mj2",
      hasAudio: true,
      video: {
        displayWidth: 640,
        displayHeight: 360,
        frameRate: 25,
        codec: "h264",
        rotation: 0,
      },
    } as unknown as Parameters<typeof describeVideo>[0];
    expect(
      describeVideo(probe, 6.0004, { input: "x", close: async () => {}, bytesRead: () => 0, info }),
    ).toEqual({
      duration_seconds: 6,
      width: 640,
      height: 360,
      frame_rate: 25,
      codec: "h264",
      rotation: 0,
      has_audio: true,
      // The no-break space in the fixture's title is data, read as a plain space.
      title: "Stills fixture: a walk through the caption tests",
      uploader: "Stills Fixtures",
      channel: "Stills Fixtures Channel",
      upload_date: "2024-05-01",
      view_count: 1234567,
      page_url: "https://www.youtube.com/watch?v=dQw4fixture",
    });
  });

  it("drops junk a page put in the info instead of failing on it", () => {
    const info = platformInfo({
      title: "line\u0000one\u202eevil\n\ntwo",
      uploader: 42,
      channel: "x".repeat(600),
      upload_date: "20241399",
      view_count: -5,
      webpage_url: "javascript:alert(1)",
      subtitles: { en: "not a list", de: [{ ext: "vtt", url: "file:///etc/passwd" }] },
      automatic_captions: [1, 2],
    });
    expect(info.subtitles).toEqual({});
    expect(info.automatic_captions).toEqual({});
    const probe = {
      hasAudio: false,
      video: { displayWidth: 2, displayHeight: 2, frameRate: null, codec: "vp9", rotation: 90 },
    } as unknown as Parameters<typeof describeVideo>[0];
    const facts = describeVideo(probe, 1, {
      input: "x",
      close: async () => {},
      bytesRead: () => 0,
      info,
    });
    expect(facts).toMatchObject({
      title: "line one evil two",
      uploader: null,
      upload_date: null,
      view_count: null,
      page_url: null,
    });
    expect(facts.channel).toHaveLength(500);
  });
});

describe("choosing a platform caption track", () => {
  it("takes the uploader's own track in the video's language, as VTT", async () => {
    const info = platformInfo(await infoFixture("youtube-info.json"));
    const track = choosePlatformTrack(info, null);
    expect(track).toMatchObject({ language: "en", source: "uploader" });
    expect(track?.file.ext).toBe("vtt");
    expect(track?.file.url).toMatch(/lang=en&fmt=vtt$/);
  });

  it("honours a requested language, on its primary subtag too", async () => {
    const info = platformInfo(await infoFixture("youtube-info.json"));
    expect(choosePlatformTrack(info, "de-AT")).toMatchObject({
      language: "de",
      source: "uploader",
    });
    // No uploader track in French: the uploader's own tracks still come before automatic ones.
    expect(choosePlatformTrack(info, "fr")).toMatchObject({ language: "en", source: "uploader" });
  });

  it("uses automatic captions only when the uploader has none, the original speech first", async () => {
    const info = platformInfo(await infoFixture("youtube-info-automatic-only.json"));
    const track = choosePlatformTrack(info, null);
    expect(track).toMatchObject({ language: "en", source: "automatic" });
    expect(track?.file.url).toMatch(/kind=asr&fmt=vtt$/);
    expect(choosePlatformTrack(info, "fr")?.file.url).toMatch(/tlang=fr&fmt=vtt$/);
  });

  it("finds nothing in a chat replay or in formats it cannot read", () => {
    const info = platformInfo({
      subtitles: { live_chat: [{ ext: "json", url: "https://www.youtube.com/watch?v=x" }] },
      automatic_captions: { en: [{ ext: "json3", url: "https://www.youtube.com/api/timedtext" }] },
    });
    expect(choosePlatformTrack(info, null)).toBeNull();
  });
});

describe("subtitle files as data", () => {
  it("reads YouTube's uploader and automatic VTT as plain cues", async () => {
    expect(parseCues(await fixture("en.vtt"))).toEqual(UPLOADER_CUES);
    expect(parseCues(await fixture("en-orig.vtt"))).toEqual(AUTOMATIC_CUES);
  });

  it("drops a cue in the year 3000 and keeps the others", () => {
    const text =
      "WEBVTT\n\n8760000:00:00.000 --> 8760000:00:05.000\nfrom the future\n\n00:00:01.000 --> 00:00:02.000\nnow\n";
    expect(parseCues(text, 0, 60)).toEqual([{ start: 1, end: 2, text: "now" }]);
  });

  it("caps a giant cue at the caption limit", () => {
    const text = `WEBVTT\n\n00:00:00.000 --> 00:00:05.000\n${"ab ".repeat(2_000_000)}\n`;
    const [cue] = parseCues(text);
    expect(cue.text.length).toBe(MAX_CAPTION_CHARS);
  });

  it("refuses bytes that are not UTF-8 and files over the size cap", () => {
    const latin1 = Buffer.from("WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nCaf\xe9\n", "latin1");
    expect(() => decodeSubtitleBytes(latin1)).toThrow(CaptionsError);
    expect(() => decodeSubtitleBytes(new Uint8Array(3 * 1024 * 1024))).toThrow(/larger than/);
    expect(decodeSubtitleBytes(Buffer.from("\ufeffWEBVTT\n"))).toBe("WEBVTT\n");
  });

  it("writes a file that cannot carry markup or break its cues, and reads back as the same text", () => {
    const cues = [{ start: 1, end: 2.5, text: "<script>alert(1)</script> --> & done" }];
    const vtt = writeWebVtt(cues, "en");
    expect(vtt).toBe(
      "WEBVTT\nLanguage: en\n\n00:00:01.000 --> 00:00:02.500\n&lt;script&gt;alert(1)&lt;/script&gt; --&gt; &amp; done\n",
    );
    // Our parser strips tags, so the escaped text comes back without them being markup.
    expect(parseCues(vtt)[0].text).toBe("<script>alert(1)</script> --> & done");
  });

  it("a cue covers [start, end): at its end it is gone", () => {
    expect(captionAt(UPLOADER_CUES, 1.999)).toBe("Welcome to the <caption> tests");
    expect(captionAt(UPLOADER_CUES, 2)).toBe("Fish & chips\non the second line");
    expect(captionAt(UPLOADER_CUES, 3.5)).toBeNull();
    expect(captionAt(AUTOMATIC_CUES, 2.595)).toBe("welcome to the tests");
  });
});

describe("platform captions through openSource and a stand-in yt-dlp", () => {
  let server: TestServer;
  let directory: string;
  let video: string;
  const captionRequests: string[] = [];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "stills-ytdlp-info-"));
    video = join(directory, "video.mp4");
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=10:duration=6"],
      ...["-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart", video],
    ]);
    server = await startTestServer();
    server.route("/videoplayback", fileRoute(video, { ranges: true }));
    const files: Record<string, string> = {
      uploader: await fixture("en.vtt"),
      automatic: await fixture("en-orig.vtt"),
    };
    server.route("/api/timedtext", (request, response) => {
      const query = new URL(request.url ?? "/", server.origin).searchParams;
      captionRequests.push(query.toString());
      if (query.get("fmt") !== "vtt") return response.writeHead(400).end("only vtt here");
      if (query.get("lang") === "huge") return response.writeHead(200).end("x".repeat(3 << 20));
      response.writeHead(200, { "content-type": "text/vtt" });
      response.end(query.get("kind") === "asr" ? files.automatic : files.uploader);
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  /** A yt-dlp that prints the fixture with the platform's hosts pointed at the test server. */
  async function fakeYtDlp(name: string, edit: (info: Record<string, unknown>) => void = () => {}) {
    const info = await infoFixture(name);
    edit(info);
    const text = JSON.stringify(info)
      .replaceAll("https://www.youtube.com/api/timedtext", `${server.origin}/api/timedtext`)
      .replaceAll(
        "https://rr3---sn-fixture.googlevideo.com/videoplayback",
        `${server.origin}/videoplayback`,
      );
    const infoPath = join(directory, `${name}.printed`);
    await writeFile(infoPath, text);
    const binary = join(directory, `yt-dlp-${name}`);
    await writeFile(binary, `#!/bin/sh\ncat "${infoPath}"\n`);
    await chmod(binary, 0o755);
    return binary;
  }

  const options = (binary: string): OpenSourceOptions => ({
    resolution: 360,
    allowPrivate: true,
    maxBytes: 100_000_000,
    deadlineMs: 30_000,
    ytDlpBinary: binary,
  });

  async function captionsJob(binary: string, sourceOptions = options(binary)) {
    const source = await openSource(
      "https://www.youtube.com/watch?v=dQw4fixture",
      "youtube",
      sourceOptions,
    );
    const out = await mkdtemp(join(tmpdir(), "stills-ytdlp-job-"));
    try {
      const outcome = await extractFrames(
        {
          input: source.input,
          options: {
            mode: "timestamps",
            timestamps: [0.2, 0.5, 1.9, 2.0, 2.6, 3.4, 3.5, 4.5, 5.0, 5.5],
            format: "jpg",
            resolution: 240,
            output: "urls",
            captions: true,
          },
          maxVideoSeconds: 3600,
          clipToMax: false,
          maxFrames: 100,
          source,
        },
        new DirectorySink(out),
      );
      return { outcome, directory: out, bytesRead: source.bytesRead() };
    } finally {
      await source.close();
    }
  }

  it("fetches the uploader's VTT itself and puts each cue on the frames it is on screen for", async () => {
    captionRequests.length = 0;
    const job = await captionsJob(await fakeYtDlp("youtube-info.json"));
    expect(job.outcome.status).toBe("completed");
    expect(captionRequests).toHaveLength(1);
    expect(captionRequests[0]).toMatch(/lang=en&fmt=vtt$/);
    for (const frame of job.outcome.frames) {
      const pts = frame.pts as number;
      const onScreen = UPLOADER_CUES.filter((c) => c.start <= pts && pts < c.end).map(
        (c) => c.text,
      );
      expect({ pts, caption: frame.caption }).toEqual({
        pts,
        caption: onScreen.join("\n") || null,
      });
    }
    expect(job.outcome.captions).toEqual({
      key: "captions.vtt",
      language: "en",
      source: "uploader",
    });
    expect(job.outcome.video).toMatchObject({
      duration_seconds: 6,
      width: 640,
      height: 360,
      title: "Stills fixture: a walk through the caption tests",
      upload_date: "2024-05-01",
    });
    const written = await readFile(join(job.directory, "captions.vtt"), "utf8");
    expect(written).toContain(
      "00:00:02.000 --> 00:00:03.500\nFish &amp; chips\non the second line\n",
    );
    expect(written).not.toContain("<c.");
    // The caption file counted against the source's byte budget with the video.
    const size = (await readFile(join(FIXTURES, "en.vtt"))).length;
    expect(job.bytesRead).toBeGreaterThan(size);
  });

  it("no tracks at all: frames, a note, no caption request", async () => {
    captionRequests.length = 0;
    const binary = await fakeYtDlp("youtube-info-automatic-only.json", (info) => {
      info.automatic_captions = {};
    });
    const job = await captionsJob(binary);
    expect(job.outcome.status).toBe("completed");
    expect(job.outcome.frames.every((f) => f.status === "ok")).toBe(true);
    expect(job.outcome.captions ?? null).toBeNull();
    expect(job.outcome.captions_note).toBe(NO_CAPTIONS_NOTE);
    expect(captionRequests).toEqual([]);
  });

  it("an oversized caption file fails only the captions", async () => {
    const binary = await fakeYtDlp("youtube-info.json", (info) => {
      const subtitles = info.subtitles as Record<string, { ext: string; url: string }[]>;
      subtitles.en = [
        { ext: "vtt", url: "https://www.youtube.com/api/timedtext?lang=huge&fmt=vtt" },
      ];
    });
    const job = await captionsJob(binary);
    expect(job.outcome.status).toBe("completed");
    expect(job.outcome.frames.every((f) => f.status === "ok")).toBe(true);
    expect(job.outcome.captions ?? null).toBeNull();
    expect(job.outcome.captions_note).toMatch(
      /captions could not be read \(the platform's caption file is larger than 2097152 bytes\)/,
    );
  });

  it("a caption URL at a private address is refused by the egress checks", async () => {
    const publicHost = await startTestServer(PUBLIC_LOOPBACK);
    publicHost.route("/videoplayback", fileRoute(video, { ranges: true }));
    try {
      captionRequests.length = 0;
      const binary = await fakeYtDlp("youtube-info.json", (info) => {
        for (const format of info.formats as { url: string }[]) {
          format.url = `${publicHost.origin}/videoplayback`;
        }
        info.url = `${publicHost.origin}/videoplayback`;
      });
      const job = await captionsJob(binary, {
        ...options(binary),
        allowPrivate: false,
        policy: testPolicy(),
      });
      expect(job.outcome.status).toBe("completed");
      expect(job.outcome.captions ?? null).toBeNull();
      // The notice says what failed, never the refused address.
      expect(job.outcome.captions_note).toBe(
        "This video's captions could not be read (the platform's caption file could not be downloaded), so none were returned; the frames are complete and captions were not charged.",
      );
      // The private test server (127.0.0.1) never saw the request.
      expect(captionRequests).toEqual([]);
    } finally {
      await publicHost.close();
    }
  });
});
