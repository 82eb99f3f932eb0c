// openSource: a video link in, a loopback URL ffmpeg can read out. Platform links go through
// yt-dlp, Drive links through their confirmation page, direct links straight to the relay
// (or through yt-dlp's generic extractor when they turn out to be a page around a video).
import type { SourceIdentity } from "../../schema/messages.ts";
import type { Platform } from "../../schema/platform.ts";
import { detectSource } from "../../schema/platform.ts";
import { log } from "../log.ts";
import { openDashVod } from "./dash-origin.ts";
import {
  asSourceError,
  downloadFailed,
  notAVideoLink,
  noVideoFound,
  privateContent,
  SourceError,
} from "./errors.ts";
import { openFetchSession } from "./fetch-session.ts";
import { readDrivePage } from "./google-drive.ts";
import { openHlsPlaylist } from "./hls-origin.ts";
import { openHlsVod } from "./hls-vod-origin.ts";
import type { MinimumRate } from "./minimum-rate.ts";
import type { Opened } from "./open-media.ts";
import { openMedia } from "./open-media.ts";
import type { AddressPolicy } from "./policy.ts";
import { checkHop, hopPolicy } from "./policy.ts";
import type { ServedMedia } from "./ranged-origin.ts";
import type { Relay } from "./relay.ts";
import { startRelay } from "./relay.ts";
import type { FetchOptions } from "./safe-fetch.ts";
import { readBody, safeFetch } from "./safe-fetch.ts";
import type { PlatformInfo, ResolvedMedia } from "./ytdlp.ts";
import { resolveWithYtDlp } from "./ytdlp.ts";

export { SourceError } from "./errors.ts";
export type { MinimumRate } from "./minimum-rate.ts";
export type { AddressPolicy } from "./policy.ts";
export { defaultPolicy } from "./policy.ts";
export type { FetchedResponse, FetchOptions } from "./safe-fetch.ts";
export { ByteBudget, createAgents, MAX_REDIRECTS, readBody, safeFetch } from "./safe-fetch.ts";
export type { PlatformInfo, SubtitleFile } from "./ytdlp.ts";

export interface OpenSourceOptions {
  /** Requested short side; platform sources pick the largest version not above it. */
  resolution: number;
  allowPrivate: boolean;
  /** Most bytes this source may take from origins, over all requests. */
  maxBytes: number;
  /** Lifetime of the source, from opening to the last byte ffmpeg reads. */
  deadlineMs: number;
  signal?: AbortSignal;
  /** Replaces the address rules (tests); defaultPolicy(allowPrivate, serviceOrigin) otherwise. */
  policy?: AddressPolicy;
  /** The service's own origin, whose sample videos are fetched even without allowPrivate. */
  serviceOrigin?: string;
  /** Longest wait for an origin's answer to one request. */
  answerTimeoutMs?: number;
  /** What every media body must keep delivering while it is read. */
  minRate?: MinimumRate;
  ytDlpBinary?: string;
}

export interface OpenedSource {
  /** http://127.0.0.1:PORT/TOKEN: what ffmpeg reads (needs only the http and tcp protocols). */
  input: string;
  close(): Promise<void>;
  /** Bytes taken from the origin so far. */
  bytesRead(): number;
  resolutionNote: string | null;
  contentLength: number | null;
  /** Why serving failed, if it did: explains an ffmpeg failure as the spec's error. */
  failure(): SourceError | null;
  /** The relay itself, which can hide from a decode run the pictures it does not need. */
  hidingRelay(): Promise<Relay>;
  /** yt-dlp's info for platform links (and pages around a video); null for direct files. */
  info: PlatformInfo | null;
  /**
   * What identifies the source, from the answers already had (decision 0350): the platform's id
   * for a platform link, else the file's final URL with its validators and size; null when
   * they cannot tell the same bytes again (no validator, unknown size, HLS).
   */
  identity: SourceIdentity | null;
  /**
   * A small file the platform named (a caption track), fetched like the media: the same
   * address checks, the same byte budget, the source's deadline; at most maxBytes.
   */
  fetchSmallFile(url: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array>;
}

const DRIVE_CONFIRMATIONS = 2;

export async function openSource(
  submittedUrl: string,
  platform: Platform | string,
  options: OpenSourceOptions,
): Promise<OpenedSource> {
  // The edge sends the normalised URL; normalising again (idempotent) keeps a raw share link
  // (a Drive viewer page, say) from being fetched as if it were the file.
  const detected = detectSource(submittedUrl);
  const url = detected.ok && detected.platform === platform ? detected.url : submittedUrl;
  const { policy, signal, lifetime, budget, fetchOptions, release } = openFetchSession(options);
  let media: ServedMedia | null = null;
  try {
    checkHop(url, hopPolicy(url, policy));
    let resolutionNote: string | null = null;
    let info: PlatformInfo | null = null;
    let platformId: string | null = null;
    let opened: Opened;
    if (platform === "direct") {
      opened = await openMedia(url, fetchOptions, true);
      if (opened.kind === "page") {
        // A page can wrap a video (yt-dlp's generic extractor finds it); one that names none
        // fails at once, as fast as the edge's own check used to (decision 0260).
        if (!mayHoldVideo(opened.html)) throw notAVideoLink("a page without a video");
        const resolved = await resolveWithYtDlp(
          opened.url.toString(),
          ytDlpOptions(options, policy, signal),
        ).catch((error: unknown) => {
          throw error instanceof SourceError && error.name === "NoVideoFound"
            ? notAVideoLink(`a page without a video: ${error.message}`)
            : error;
        });
        resolutionNote = resolved.resolutionNote;
        info = resolved.info;
        opened = await openResolved(resolved, fetchOptions, options.resolution);
      } else if (opened.kind === "dash") {
        // A DASH manifest (decision 0333): read through the same view as an HLS playlist.
        const dash = await openDashVod(opened.url, fetchOptions, {
          resolution: options.resolution,
          callersLink: true,
          text: opened.text,
        });
        resolutionNote = dash.resolutionNote;
        opened = dash.opened;
      } else if (opened.kind === "playlist") {
        // An HLS link (decision 0330): the variant, then only the segments ffmpeg reads.
        const hls = await openHlsVod(opened.url, fetchOptions, {
          resolution: options.resolution,
          callersLink: true,
          text: opened.text,
        });
        resolutionNote = hls.resolutionNote;
        opened = hls.opened;
      }
    } else if (platform === "google_drive") {
      opened = await openDriveFile(url, fetchOptions);
    } else {
      const resolved = await resolveWithYtDlp(url, ytDlpOptions(options, policy, signal));
      resolutionNote = resolved.resolutionNote;
      info = resolved.info;
      platformId = resolved.platformId ?? null;
      opened = await openResolved(resolved, fetchOptions, options.resolution);
    }
    if (opened.kind !== "media") {
      const what =
        opened.kind === "page"
          ? "a page without a video"
          : opened.kind === "dash"
            ? "a DASH manifest"
            : "a playlist";
      throw noVideoFound(`${opened.url.origin}${opened.url.pathname} is ${what}`);
    }
    media = opened.media;
    const relay = await startRelay(media);
    // The job and attempt fields come from the log context the server set for this job.
    log("info", "source.resolved", {
      platform,
      via: info ? "yt-dlp" : platform === "google_drive" ? "drive" : "direct",
      content_length: opened.contentLength,
      resolution_note: resolutionNote,
    });
    // Only the deadline counts; "source closed" after close() is not a failure.
    const lifetimeFailure = () =>
      lifetime.signal.reason instanceof SourceError ? lifetime.signal.reason : null;
    return {
      input: relay.url,
      resolutionNote,
      contentLength: opened.contentLength,
      bytesRead: () => budget.read,
      failure: () => relay.failure() ?? lifetimeFailure(),
      hidingRelay: async () => relay,
      info,
      identity: platformId !== null ? { platform_id: platformId } : (opened.identity ?? null),
      fetchSmallFile: (fileUrl, maxBytes, callerSignal) =>
        fetchSmallFile(fileUrl, maxBytes, {
          ...fetchOptions,
          signal: callerSignal ? AbortSignal.any([signal, callerSignal]) : signal,
        }),
      async close() {
        release();
        await relay.close();
      },
    };
  } catch (error) {
    // A deadline or a caller's abort explains the failure better than the aborted request.
    const cause = signal.aborted ? signal.reason : error;
    release();
    await media?.close();
    throw asSourceError(cause, "opening the source");
  }
}

// What yt-dlp's generic extractor looks for in a page (media tags, embeds, players, Open Graph
// and Twitter cards, JSON-LD, manifest and file links). A page with none of them holds no video
// it could find, so it is not worth starting yt-dlp for.
const VIDEO_HINTS =
  /<(video|source|iframe|embed|object)\b|og:video|twitter:player|application\/ld\+json|\.(m3u8|mpd|mp4|m4v|webm|mov|flv)\b|player/i;

/** Whether a page may hold a video yt-dlp can find. */
export function mayHoldVideo(html: string): boolean {
  return VIDEO_HINTS.test(html);
}

async function fetchSmallFile(
  url: string,
  maxBytes: number,
  fetchOptions: FetchOptions,
): Promise<Uint8Array> {
  try {
    const response = await safeFetch(url, { ...fetchOptions, maxRedirects: 3 });
    if (response.status !== 200) {
      response.body.destroy();
      throw downloadFailed(`${response.url.host} answered ${response.status}`);
    }
    return await readBody(response.body, maxBytes);
  } catch (error) {
    throw asSourceError(
      fetchOptions.signal?.aborted ? fetchOptions.signal.reason : error,
      "fetching a caption file",
    );
  }
}

function ytDlpOptions(options: OpenSourceOptions, policy: AddressPolicy, signal: AbortSignal) {
  return {
    resolution: options.resolution,
    policy,
    deadlineMs: Math.min(options.deadlineMs, 120_000),
    signal,
    binary: options.ytDlpBinary,
  };
}

async function openResolved(
  resolved: ResolvedMedia,
  fetchOptions: FetchOptions,
  resolution: number,
): Promise<Opened> {
  const options = { ...fetchOptions, headers: resolved.headers };
  if (resolved.kind !== "hls") return openMedia(resolved.url, options);
  // A platform's VOD (fMP4 or MPEG-TS segments) is read as a direct .m3u8 link is, a segment at
  // a time; a live one is joined into one download as before.
  try {
    const hls = await openHlsVod(new URL(resolved.url), options, {
      resolution,
      callersLink: false,
    });
    return hls.opened;
  } catch (error) {
    if (!(error instanceof SourceError && /MPEG-TS|live playlist/.test(error.message))) throw error;
    return openHlsPlaylist(resolved.url, options);
  }
}

async function openDriveFile(url: string, fetchOptions: FetchOptions): Promise<Opened> {
  let opened = await openMedia(url, fetchOptions);
  for (let step = 0; opened.kind === "page"; step += 1) {
    if (opened.url.hostname === "accounts.google.com") {
      throw privateContent("Google Drive asked for a login: the file is not shared publicly");
    }
    const verdict = readDrivePage(opened.html, opened.url);
    if (verdict.kind === "error") throw verdict.error;
    if (step === DRIVE_CONFIRMATIONS) throw noVideoFound("Google Drive kept asking to confirm");
    opened = await openMedia(verdict.url, fetchOptions);
  }
  return opened;
}
