// HLS versions (some platforms offer their higher resolutions only this way) are joined into
// one file here rather than handed to ffmpeg: its HLS demuxer would open whatever URLs and
// files a playlist names, so the engine's demuxer whitelist leaves it out. Init segment plus
// fMP4 fragments (or MPEG-TS segments) concatenated are a valid file; every segment URL is
// fetched through the checked fetcher like any other.
import { Readable } from "node:stream";
import { DownloadedOrigin } from "./downloaded-origin.ts";
import { downloadFailed, errorForStatus, noVideoFound } from "./errors.ts";
import type { Opened } from "./open-media.ts";
import type { FetchOptions } from "./safe-fetch.ts";
import { readBody, safeFetch } from "./safe-fetch.ts";

const PLAYLIST_BYTES = 4 * 1024 * 1024;

export interface HlsPart {
  url: URL;
  /** "length@offset" byte range inside the resource, when the playlist gives one. */
  range: { length: number; offset: number } | null;
}

export function parseMediaPlaylist(text: string, base: URL): HlsPart[] {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  if (lines[0] !== "#EXTM3U") throw noVideoFound("the HLS playlist is not a playlist");
  if (lines.some((line) => line.startsWith("#EXT-X-STREAM-INF"))) {
    throw downloadFailed("expected a media playlist, got a master playlist");
  }
  const parts: HlsPart[] = [];
  let pendingRange: HlsPart["range"] = null;
  let nextOffset = 0;
  const byteRange = (spec: string) => {
    const [length, offset] = spec.split("@").map(Number);
    const range = { length, offset: Number.isFinite(offset) ? offset : nextOffset };
    nextOffset = range.offset + range.length;
    return range;
  };
  for (const line of lines) {
    if (line.startsWith("#EXT-X-KEY") && !/METHOD=NONE/.test(line)) {
      throw downloadFailed("encrypted HLS streams are not supported");
    }
    if (line.startsWith("#EXT-X-MAP:")) {
      const uri = /URI="([^"]+)"/.exec(line)?.[1];
      const range = /BYTERANGE="([^"]+)"/.exec(line)?.[1];
      if (uri) parts.push({ url: new URL(uri, base), range: range ? byteRange(range) : null });
    } else if (line.startsWith("#EXT-X-BYTERANGE:")) {
      pendingRange = byteRange(line.slice("#EXT-X-BYTERANGE:".length));
    } else if (line !== "" && !line.startsWith("#")) {
      parts.push({ url: new URL(line, base), range: pendingRange });
      pendingRange = null;
    }
  }
  if (parts.length === 0) throw noVideoFound("the HLS playlist lists no segments");
  return parts;
}

export async function openHlsPlaylist(
  url: string | URL,
  fetchOptions: FetchOptions,
): Promise<Opened> {
  const response = await safeFetch(url, fetchOptions);
  if (response.status >= 400) {
    response.body.destroy();
    throw errorForStatus(response.status, `${response.url.origin}${response.url.pathname}`);
  }
  const text = (await readBody(response.body, PLAYLIST_BYTES)).toString("utf8");
  const parts = parseMediaPlaylist(text, response.url);
  async function* segments() {
    for (const part of parts) {
      const range: Record<string, string> = part.range
        ? { range: `bytes=${part.range.offset}-${part.range.offset + part.range.length - 1}` }
        : {};
      const segment = await safeFetch(part.url, {
        ...fetchOptions,
        headers: { ...fetchOptions.headers, ...range },
      });
      if (segment.status >= 400) {
        segment.body.destroy();
        throw errorForStatus(segment.status, part.url.pathname);
      }
      if (part.range && segment.status !== 206) {
        segment.body.destroy();
        throw downloadFailed("an HLS byte-range segment was answered without a range");
      }
      yield* segment.body as AsyncIterable<Buffer>;
    }
  }
  const media = new DownloadedOrigin(Buffer.alloc(0), Readable.from(segments()), null, "video/mp4");
  return { kind: "media", media, contentLength: null, url: response.url };
}
