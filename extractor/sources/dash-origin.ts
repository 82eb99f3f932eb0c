// A DASH VOD manifest (.mpd) read as an HLS VOD playlist is (decision 0333): the video
// representation chosen as a master playlist's variant is, its fMP4 segments served to the relay
// through the same view (hls-vod-origin.ts), fetched only where ffmpeg reads. Every URL the
// manifest names, in every representation, is judged by the address rules before any is fetched.

import type { DashRepresentation, Manifest } from "./dash-manifest.ts";
import {
  MANIFEST_BYTES,
  ManifestProblem,
  manifestUrls,
  parseManifest,
  segmentsFromSidx,
  videoRepresentations,
} from "./dash-manifest.ts";
import { notAVideoLink, noVideoFound } from "./errors.ts";
import { fetchTextDocument } from "./fetch-text.ts";
import { chooseVariant, PlaylistProblem } from "./hls-playlist.ts";
import type { OpenedHls } from "./hls-vod-origin.ts";
import { fetchPart, HlsVodMedia } from "./hls-vod-origin.ts";
import { checkHop, hopPolicy } from "./policy.ts";
import type { FetchOptions } from "./safe-fetch.ts";

/** Largest sidx read for a SegmentBase representation (20,000 references are 240 KB). */
const INDEX_BYTES = 1024 * 1024;

export interface DashOpenOptions {
  resolution: number;
  callersLink: boolean;
  /** The manifest's text when the first request already read all of it. */
  text?: string;
}

export async function openDashVod(
  url: URL,
  fetchOptions: FetchOptions,
  options: DashOpenOptions,
): Promise<OpenedHls> {
  const refuse = (reason: string) =>
    options.callersLink
      ? notAVideoLink(`a DASH manifest that cannot be read: ${reason}`)
      : noVideoFound(`the DASH manifest at ${url.origin}${url.pathname} cannot be read: ${reason}`);
  const fetched =
    options.text !== undefined
      ? { text: options.text, url }
      : await fetchTextDocument(url, fetchOptions, {
          name: "DASH manifest",
          maxBytes: MANIFEST_BYTES,
        });
  let manifest: Manifest;
  let chosen: { variant: DashRepresentation; note: string | null };
  try {
    manifest = parseManifest(fetched.text, fetched.url);
    // All of them before any is fetched: one private URL refuses the whole manifest.
    const judged = new Set<string>();
    for (const named of manifestUrls(manifest)) {
      if (judged.has(named.origin)) continue;
      checkHop(named, hopPolicy(named, fetchOptions.policy));
      judged.add(named.origin);
    }
    const found = chooseVariant(videoRepresentations(manifest), options.resolution);
    chosen = { variant: found.variant as DashRepresentation, note: found.note };
  } catch (error) {
    if (error instanceof ManifestProblem || error instanceof PlaylistProblem) {
      throw refuse(error.message);
    }
    throw error;
  }
  const representation = chosen.variant;
  if (!representation.init) {
    throw refuse("its video has no initialization segment; only fMP4 (ISO BMFF) segments are read");
  }
  let segments = representation.segments;
  if (!segments) {
    const index = representation.index as NonNullable<DashRepresentation["index"]>;
    const sidx = await fetchPart(index.url, index.range, INDEX_BYTES, fetchOptions);
    try {
      segments = segmentsFromSidx(sidx, index.url, index.range);
    } catch (error) {
      throw error instanceof ManifestProblem ? refuse(error.message) : error;
    }
  }
  const last = segments[segments.length - 1];
  const media = await HlsVodMedia.open(
    { segments, init: representation.init, duration: last.start + last.duration },
    fetchOptions,
    refuse,
  );
  return {
    opened: { kind: "media", media, contentLength: null, url: fetched.url },
    resolutionNote: chosen.note,
  };
}
