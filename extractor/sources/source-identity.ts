// What makes a source the same source again (decision 0350): a platform's own id, or a file's
// final URL with the validators and size its origin answered with. Nothing here fetches; the
// values come from the first answer the source gave (open-media.ts) or from yt-dlp's info.
import type { IncomingHttpHeaders } from "node:http";
import type { SourceIdentity } from "../../schema/messages.ts";

const MAX_VALIDATOR_CHARS = 1000;

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  const first = (Array.isArray(value) ? value[0] : value)?.trim();
  return first && first.length <= MAX_VALIDATOR_CHARS ? first : null;
}

/**
 * A file's identity: its URL after redirects, its ETag or Last-Modified, and its size. Null
 * when the origin gave neither validator or the size is unknown: the URL alone says nothing
 * about the bytes behind it, which may change at any time.
 */
export function fileIdentity(
  finalUrl: URL,
  headers: IncomingHttpHeaders,
  size: number | null,
): SourceIdentity | null {
  const etag = header(headers, "etag");
  const lastModified = header(headers, "last-modified");
  if (size === null || !Number.isSafeInteger(size) || size < 0) return null;
  if (etag === null && lastModified === null) return null;
  const url = finalUrl.href;
  if (url.length > 8192) return null;
  return { final_url: url, etag, last_modified: lastModified, size };
}

/** A platform video's identity: yt-dlp's extractor and the platform's id of the video. */
export function platformIdentity(raw: Record<string, unknown>): string | null {
  const extractor = raw.extractor_key ?? raw.extractor;
  const id = raw.id;
  if (typeof extractor !== "string" || typeof id !== "string") return null;
  if (extractor === "" || id === "" || /^generic$/i.test(extractor)) return null;
  const platformId = `${extractor.toLowerCase()}:${id}`;
  return platformId.length <= 300 ? platformId : null;
}
