// How a job's URL becomes what ffmpeg reads: the sources module (extractor/sources/) resolves
// platforms, downloads or relays, and hands back a local path or a loopback relay URL. Loaded
// lazily so the service starts (and /healthz answers) without paying for it first, and so tests
// can put their own opener in its place.
import type { ExtractRequest, SourceIdentity } from "../schema/messages.ts";
import type { ExtractorConfig } from "./config.ts";
import type { LiveStream } from "./sources/hls-live.ts";
import type { Relay } from "./sources/relay.ts";
import type { PlatformInfo } from "./sources/ytdlp.ts";

export interface SourceHandle {
  /** A local file path or http://127.0.0.1:PORT/… of the loopback relay. */
  input: string;
  close(): Promise<void>;
  bytesRead(): number;
  /** The platform had no version at the requested resolution. */
  resolutionNote?: string | null;
  /** Why serving the media failed, if it did (explains an ffmpeg failure). */
  failure?(): unknown;
  /** What the platform says about the video (yt-dlp's info), for job.video and captions. */
  info?: PlatformInfo | null;
  /** What identifies the source, for reusing an earlier job's frames (decision 0350). */
  identity?: SourceIdentity | null;
  /** Fetches a file the platform named (a caption track) through the source's egress checks
   * and byte budget; absent where the opener cannot (tests' own openers). */
  fetchSmallFile?(url: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * The relay that serves a decode run only what the file's index says it needs: the file
   * with the pictures it does not need hidden (ffmpeg/unneeded-frames.ts), or a view of only
   * the stretches it decodes (ffmpeg/mp4-spans.ts); absent where the opener has none to offer.
   */
  hidingRelay?(): Promise<HidingRelay>;
  /** mode live: the live playlist, watched a segment at a time (extractor/live.ts). */
  live?: LiveStream;
}

export type HidingRelay = Pick<Relay, "withoutUnneededFrames" | "withSpans">;

export type OpenSource = (
  request: ExtractRequest,
  settings: { deadlineSeconds: number },
) => Promise<SourceHandle>;

export type SourceSettings = Pick<
  ExtractorConfig,
  "allowPrivate" | "maxSourceBytes" | "sourceMinRate"
>;

export function sourceOpener(settings: SourceSettings): OpenSource {
  return async (request, { deadlineSeconds }) => {
    if (request.options.mode === "live") {
      const { openLiveSource } = await import("./sources/hls-live-source.ts");
      return openLiveSource(request.url, request.platform, {
        resolution: request.options.resolution,
        allowPrivate: settings.allowPrivate,
        serviceOrigin: new URL(request.callback.base_url).origin,
        maxBytes: settings.maxSourceBytes,
        deadlineMs: deadlineSeconds * 1000,
      });
    }
    const sources = await import("./sources/index.ts");
    return sources.openSource(request.url, request.platform, {
      resolution: request.options.resolution,
      allowPrivate: settings.allowPrivate,
      // The edge's own origin: its sample videos are fetched even where private ones are not.
      serviceOrigin: new URL(request.callback.base_url).origin,
      maxBytes: settings.maxSourceBytes,
      minRate: settings.sourceMinRate,
      deadlineMs: deadlineSeconds * 1000,
    });
  };
}
