// A live HLS origin on loopback for tests (decision 0360): fMP4 segments cut once by ffmpeg's
// hls muxer from a video whose every frame carries its number (test/support/videos.ts), served
// as a sliding window whose newest segment is the last one that ends by the origin's clock. The
// clock runs with the wall clock (or a test's simulated one: `now`) from where the test set it,
// and can be frozen (a stall) or the stream ended (EXT-X-ENDLIST).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { makeTestVideo, VIDEO_CACHE_DIR } from "../../support/videos.ts";
import type { TestServer } from "./servers.ts";
import { startTestServer } from "./servers.ts";

const run = promisify(execFile);

export const LIVE_FPS = 10;
export const LIVE_SEGMENT_SECONDS = 2;
export const LIVE_SEGMENTS = 60;
/** Every segment's EXT-X-PROGRAM-DATE-TIME is this plus its stream time. */
export const LIVE_EPOCH_MS = Date.parse("2026-11-28T12:00:00.000Z");

/** The frame number on screen at stream time t (frames are 1/LIVE_FPS s apart from 0). */
export function liveFrameAt(t: number): number {
  return Math.floor(t * LIVE_FPS + 1e-6);
}

/**
 * Makes (once) the segments: 120 s, 10 fps, a keyframe every 2 s, no B-frames; fMP4 (s0.m4s…
 * with init.mp4) or, with `ts`, MPEG-TS (s0.ts…, whose PTS start where ffmpeg's muxer puts them).
 */
export async function makeLiveSegments(ts = false): Promise<string> {
  const directory = join(VIDEO_CACHE_DIR, ts ? "hls-live-ts-v1" : "hls-live-v1");
  if (existsSync(join(directory, "done"))) return directory;
  const source = await makeTestVideo({
    durationSeconds: LIVE_SEGMENTS * LIVE_SEGMENT_SECONDS,
    fps: LIVE_FPS,
    gop: LIVE_FPS * LIVE_SEGMENT_SECONDS,
    bframes: 0,
    width: 320,
    height: 180,
  });
  const building = `${directory}.${process.pid}.tmp`;
  await mkdir(building, { recursive: true });
  await run("ffmpeg", [
    ...["-v", "error", "-y", "-i", source, "-c", "copy", "-f", "hls"],
    ...["-hls_time", String(LIVE_SEGMENT_SECONDS), "-hls_playlist_type", "vod"],
    ...["-hls_segment_type", ts ? "mpegts" : "fmp4"],
    ...["-hls_segment_filename", join(building, ts ? "s%d.ts" : "s%d.m4s")],
    join(building, "index.m3u8"),
  ]);
  await run("touch", [join(building, "done")]);
  await rename(building, directory).catch(() => {});
  return directory;
}

export interface LiveOriginOptions {
  host?: string;
  /** Stream seconds on the clock when the origin starts. */
  clock: number;
  /** Segments in the window (RFC 8216 asks for at least three target durations' worth). */
  window?: number;
  /** Without EXT-X-PROGRAM-DATE-TIME (captured_at is then the time the segment was read). */
  noDateTime?: boolean;
  /** MPEG-TS segments (no EXT-X-MAP) instead of fMP4. */
  ts?: boolean;
  /** The URI written for segment i (a hostile one, say); `s{i}.m4s` by default. */
  segmentUri?: (i: number) => string;
  /** Milliseconds now, for a simulated clock (support/virtual-clock.ts); Date.now by default. */
  now?: () => number;
}

export interface LiveOrigin {
  url: string;
  server: TestServer;
  /** Segments fetched, by number, in order. */
  segmentsFetched(): number[];
  clock(): number;
  /** Stops the clock: the playlist stops advancing (a stall). */
  freeze(): void;
  /** The stream ends now: the playlist gets EXT-X-ENDLIST and stops advancing. */
  end(): void;
  /** Changes how segment URIs are written from the next playlist on. */
  setSegmentUri(uri: (i: number) => string): void;
  close(): Promise<void>;
}

export async function startLiveOrigin(options: LiveOriginOptions): Promise<LiveOrigin> {
  const directory = await makeLiveSegments(options.ts);
  const extension = options.ts ? "ts" : "m4s";
  const server = await startTestServer(options.host);
  const window = options.window ?? 5;
  const now = options.now ?? Date.now;
  const startedAt = now();
  let frozenAt: number | null = null;
  let ended = false;
  let segmentUri = options.segmentUri ?? ((i: number) => `s${i}.${extension}`);
  const clock = () =>
    frozenAt ?? Math.min(options.clock + (now() - startedAt) / 1000, LIVE_SEGMENTS * 2);
  const playlist = () => {
    const available = Math.floor(clock() / LIVE_SEGMENT_SECONDS);
    const first = Math.max(0, available - window);
    const lines = [
      "#EXTM3U",
      "#EXT-X-VERSION:7",
      `#EXT-X-TARGETDURATION:${LIVE_SEGMENT_SECONDS}`,
      `#EXT-X-MEDIA-SEQUENCE:${first}`,
      ...(options.ts ? [] : ['#EXT-X-MAP:URI="init.mp4"']),
    ];
    for (let i = first; i < available; i += 1) {
      if (!options.noDateTime) {
        const at = new Date(LIVE_EPOCH_MS + i * LIVE_SEGMENT_SECONDS * 1000).toISOString();
        lines.push(`#EXT-X-PROGRAM-DATE-TIME:${at}`);
      }
      lines.push(`#EXTINF:${LIVE_SEGMENT_SECONDS.toFixed(6)},`, segmentUri(i));
    }
    if (ended) lines.push("#EXT-X-ENDLIST");
    return `${lines.join("\n")}\n`;
  };
  server.route("/live.m3u8", (_req, res) => {
    res.writeHead(200, { "content-type": "application/vnd.apple.mpegurl" }).end(playlist());
  });
  const serveFile =
    (name: string) => async (_req: unknown, res: import("node:http").ServerResponse) => {
      const bytes = await readFile(join(directory, name));
      res
        .writeHead(200, { "content-type": "video/mp4", "content-length": bytes.length })
        .end(bytes);
    };
  server.route("/init.mp4", serveFile("init.mp4"));
  for (let i = 0; i < LIVE_SEGMENTS; i += 1) {
    server.route(`/s${i}.${extension}`, serveFile(`s${i}.${extension}`));
  }
  return {
    url: `${server.origin}/live.m3u8`,
    server,
    segmentsFetched: () =>
      server.requests.flatMap((r) => {
        const match = /^\/s(\d+)\.(m4s|ts)/.exec(r.url);
        return match ? [Number(match[1])] : [];
      }),
    clock,
    freeze() {
      frozenAt = clock();
    },
    end() {
      frozenAt = clock();
      ended = true;
    },
    setSegmentUri(uri) {
      segmentUri = uri;
    },
    close: () => server.close(),
  };
}
