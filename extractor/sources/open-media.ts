// First contact with a media URL: one ranged request that tells at once whether the origin
// honours ranges, how big the file is, and (from its first bytes) whether it is a video or a
// page. A video becomes a ServedMedia for the relay; a page goes back to the caller.
import { Readable } from "node:stream";
import type { SourceIdentity } from "../../schema/messages.ts";
import { DownloadedOrigin } from "./downloaded-origin.ts";
import { downloadFailed, errorForStatus, notAVideoLink, noVideoFound } from "./errors.ts";
import { PLAYLIST_BYTES } from "./hls-playlist.ts";
import type { ServedMedia } from "./ranged-origin.ts";
import { BLOCK_BYTES, RangedOrigin } from "./ranged-origin.ts";
import type { FetchOptions } from "./safe-fetch.ts";
import { isOverLimit, readBody, safeFetch } from "./safe-fetch.ts";
import { fileIdentity } from "./source-identity.ts";

const PAGE_BYTES = 2 * 1024 * 1024;
const SNIFF_BYTES = 4096;

export type Opened =
  | {
      kind: "media";
      media: ServedMedia;
      contentLength: number | null;
      url: URL;
      /** The file's final URL, validators and size, when they identify it (decision 0350). */
      identity?: SourceIdentity | null;
    }
  | { kind: "page"; url: URL; html: string; contentType: string }
  /** An HLS playlist: its whole text when the first answer held all of it. */
  | { kind: "playlist"; url: URL; text?: string }
  /** A DASH manifest (decision 0333): its whole text when the first answer held all of it. */
  | { kind: "dash"; url: URL; text?: string };

/**
 * `callersLink`: the URL is the one the caller gave (a direct link), so an answer that is no
 * video means the link is wrong (InvalidUrl); for a URL a platform resolved to, it means the
 * platform gave no video (NoVideoFound).
 */
export async function openMedia(
  url: string | URL,
  fetchOptions: FetchOptions,
  callersLink = false,
): Promise<Opened> {
  const notVideo = (where: string, verdict: string) =>
    callersLink
      ? notAVideoLink(verdict)
      : noVideoFound(`${where} answered ${verdict}, not a video`);
  const response = await safeFetch(url, {
    ...fetchOptions,
    headers: { ...fetchOptions.headers, range: `bytes=0-${BLOCK_BYTES - 1}` },
  });
  const where = `${response.url.origin}${response.url.pathname}`;
  const contentType = (response.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (response.status === 416) {
    response.body.destroy();
    throw noVideoFound(`the file at ${where} is empty`);
  }
  if (response.status >= 400) {
    response.body.destroy();
    throw errorForStatus(response.status, where);
  }
  if (response.status !== 200 && response.status !== 206) {
    response.body.destroy();
    throw downloadFailed(`unexpected HTTP ${response.status} from ${where}`);
  }
  const totalFromRange = /\/(\d+)$/.exec(response.headers["content-range"] ?? "")?.[1];
  if (response.status === 206 && totalFromRange !== undefined) {
    const head = await readBody(response.body, BLOCK_BYTES);
    const verdict = judgeContent(contentType, head);
    if (verdict === "page") return page(response.url, head, contentType);
    const total = Number(totalFromRange);
    if (verdict === "playlist" || verdict === "dash") {
      const text = total <= head.length ? head.toString("utf8") : undefined;
      return { kind: verdict, url: response.url, text };
    }
    if (verdict !== "media") throw notVideo(where, verdict);
    const media = new RangedOrigin(response.url, total, contentType || "video/mp4", fetchOptions);
    media.seed(0, head);
    const identity = fileIdentity(response.url, response.headers, total);
    return { kind: "media", media, contentLength: total, url: response.url, identity };
  }
  if (response.status === 206) {
    response.body.destroy();
    throw downloadFailed(`${where} sent part of a file without saying how large the file is`);
  }
  // The origin ignored the range: this one answer is the whole file.
  const { head, rest } = await splitHead(response.body, SNIFF_BYTES);
  const verdict = judgeContent(contentType, head);
  if (verdict === "page") {
    const html = Buffer.concat([head, await readBody(rest, PAGE_BYTES)]);
    return page(response.url, html, contentType);
  }
  if (verdict === "playlist" || verdict === "dash") {
    const what = verdict === "dash" ? "DASH manifest" : "HLS playlist";
    const body = await readBody(rest, PLAYLIST_BYTES - head.length).catch((error: unknown) => {
      if (!isOverLimit(error)) throw error;
      throw downloadFailed(`the ${what} at ${where} is over ${PLAYLIST_BYTES} bytes`);
    });
    const text = Buffer.concat([head, body]).toString("utf8");
    return { kind: verdict, url: response.url, text };
  }
  if (verdict !== "media") {
    rest.destroy();
    throw notVideo(where, verdict);
  }
  const announced = response.headers["content-length"];
  const length = announced !== undefined ? Number(announced) : null;
  if (length !== null && length > (fetchOptions.budget?.limit ?? Number.POSITIVE_INFINITY)) {
    rest.destroy();
    throw downloadFailed(
      `the file is ${length} bytes, over the ${fetchOptions.budget?.limit}-byte limit, and its server cannot send parts of it`,
      "The video is larger than Stills can download.",
    );
  }
  const media = new DownloadedOrigin(head, rest, length, contentType || "video/mp4");
  const identity = fileIdentity(response.url, response.headers, length);
  return { kind: "media", media, contentLength: length, url: response.url, identity };
}

function page(url: URL, body: Buffer, contentType: string): Opened {
  return { kind: "page", url, html: body.toString("utf8"), contentType };
}

/** "media", "page", "playlist" (HLS), "dash", or a description of what it is instead. */
export function judgeContent(
  contentType: string,
  head: Buffer,
): "media" | "page" | "playlist" | "dash" | string {
  if (looksLikeContainer(head)) return "media";
  const text = head
    .subarray(0, 512)
    .toString("latin1")
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, "")
    .trimStart()
    .toLowerCase();
  const htmlType = contentType === "text/html" || contentType === "application/xhtml+xml";
  if (htmlType || /^<(!doctype html|html|head|body|!--|meta|script|title)/.test(text))
    return "page";
  if (text.startsWith("#extm3u")) return "playlist";
  // A DASH manifest (decision 0333), maybe after an XML declaration and comments.
  if (
    contentType === "application/dash+xml" ||
    /^(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*<mpd[\s>]/.test(text)
  ) {
    return "dash";
  }
  if (contentType.startsWith("video/")) return "media";
  if (
    ["application/octet-stream", "binary/octet-stream", "application/mp4", ""].includes(contentType)
  ) {
    return "media";
  }
  return `content of type ${contentType}`;
}

/** Magic numbers of the containers ffmpeg may be asked to read. */
function looksLikeContainer(head: Buffer): boolean {
  const box = head.subarray(4, 8).toString("latin1");
  if (["ftyp", "moov", "mdat", "free", "wide", "skip"].includes(box)) return true;
  if (head.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))) return true;
  return ["RIFF", "OggS", "FLV\x01"].includes(head.subarray(0, 4).toString("latin1"));
}

/** Reads at least `bytes` (or all there is) from a stream, and hands back the rest unread. */
async function splitHead(body: Readable, bytes: number): Promise<{ head: Buffer; rest: Readable }> {
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let length = 0;
  let ended = false;
  while (length < bytes) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    chunks.push(next.value);
    length += next.value.length;
  }
  const rest = ended
    ? Readable.from([])
    : Readable.from({ [Symbol.asyncIterator]: () => iterator });
  rest.on("close", () => body.destroy());
  return { head: Buffer.concat(chunks), rest };
}
