// A job in mode live opens its link here instead of through openSource (sources/index.ts): the
// same address policy, byte budget, deadline and agents, but no relay, since a live stream is
// read a segment at a time as it plays (extractor/live.ts, decision 0360).
import type { Platform } from "../../schema/platform.ts";
import { asSourceError } from "./errors.ts";
import { openFetchSession } from "./fetch-session.ts";
import { LiveStream, notALiveStream } from "./hls-live.ts";
import { openMedia } from "./open-media.ts";
import type { AddressPolicy } from "./policy.ts";
import { checkHop, hopPolicy } from "./policy.ts";

export interface OpenLiveOptions {
  resolution: number;
  allowPrivate: boolean;
  maxBytes: number;
  deadlineMs: number;
  signal?: AbortSignal;
  policy?: AddressPolicy;
  serviceOrigin?: string;
  answerTimeoutMs?: number;
  /** The clock and the wait (tests); Date.now and a timer by default. */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface OpenedLiveSource {
  live: LiveStream;
  /** Nothing for ffmpeg to read as a whole: segments are handed to it one by one. */
  input: string;
  resolutionNote: string | null;
  bytesRead(): number;
  close(): Promise<void>;
}

export async function openLiveSource(
  url: string,
  platform: Platform | string,
  options: OpenLiveOptions,
): Promise<OpenedLiveSource> {
  if (platform !== "direct") {
    throw notALiveStream(
      `a ${platform} link; mode live reads a direct link to a live HLS playlist (.m3u8)`,
    );
  }
  const { policy, signal, budget, fetchOptions, release } = openFetchSession(options);
  try {
    checkHop(url, hopPolicy(url, policy));
    const opened = await openMedia(url, fetchOptions, true);
    if (opened.kind === "media") {
      await opened.media.close();
      throw notALiveStream("a video file: use another mode for files");
    }
    if (opened.kind === "page") throw notALiveStream("a web page, not an HLS playlist");
    const live = await LiveStream.open(opened.url, fetchOptions, {
      resolution: options.resolution,
      text: opened.text,
      now: options.now,
      sleep: options.sleep,
    });
    return {
      live,
      input: "",
      resolutionNote: live.resolutionNote,
      bytesRead: () => budget.read,
      async close() {
        release();
      },
    };
  } catch (error) {
    const cause = signal.aborted ? signal.reason : error;
    release();
    throw asSourceError(cause, "opening the live stream");
  }
}
