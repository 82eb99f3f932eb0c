// HLS playlists as data (RFC 8216), read with bounds: a master playlist's variants, a media
// playlist's segments with their EXTINF times, the init segment (EXT-X-MAP) and every key URI.
// Nothing here fetches; hls-vod-origin.ts judges every URI listed here before fetching any.

/** Most bytes one playlist may have (a 3-hour VOD of 2-second segments is ~300 KB). */
export const PLAYLIST_BYTES = 4 * 1024 * 1024;
/** How a playlist is fetched (sources/fetch-text.ts): named in errors, at most PLAYLIST_BYTES. */
export const PLAYLIST_DOCUMENT = { name: "HLS playlist", maxBytes: PLAYLIST_BYTES };
/** Most variants a master playlist may list (real ladders have under 20). */
export const MAX_VARIANTS = 64;
/** Most segments a media playlist may list (11 hours of 2-second segments). */
export const MAX_SEGMENTS = 20_000;
/** Longest segment: EXTINF past this is a broken or hostile playlist. */
export const MAX_SEGMENT_SECONDS = 600;

export class PlaylistProblem extends Error {}

export interface Variant {
  url: URL;
  bandwidth: number | null;
  width: number | null;
  height: number | null;
  codecs: string | null;
}

export interface ByteRange {
  offset: number;
  length: number;
}

export interface Segment {
  url: URL;
  range: ByteRange | null;
  /** EXTINF, seconds. */
  duration: number;
  /** Playlist time at which the segment starts: the sum of the EXTINFs before it. */
  start: number;
  /** Its media sequence number (EXT-X-MEDIA-SEQUENCE plus its place in the list). */
  sequence: number;
  /**
   * When it went on air, ms since the epoch: its own EXT-X-PROGRAM-DATE-TIME, or the last one
   * before it plus the EXTINFs between (RFC 8216 §4.3.2.6); null when the playlist gives none.
   */
  programDateTime: number | null;
}

export interface MasterPlaylist {
  kind: "master";
  variants: Variant[];
  /** URIs a master may name besides its variants (EXT-X-MEDIA renditions, session keys). */
  otherUris: URL[];
}

export interface MediaPlaylist {
  kind: "media";
  segments: Segment[];
  init: { url: URL; range: ByteRange | null } | null;
  /** Every EXT-X-KEY that encrypts (METHOD other than NONE), with its URI if any. */
  keys: Array<{ method: string; url: URL | null }>;
  /** EXT-X-ENDLIST or PLAYLIST-TYPE:VOD: the list is complete. */
  complete: boolean;
  /** EXT-X-ENDLIST itself: a live stream that has ended says so with it. */
  ended: boolean;
  /** EXT-X-TARGETDURATION, seconds (null when missing): a live reload waits at least this. */
  targetDuration: number | null;
  duration: number;
}

export type Playlist = MasterPlaylist | MediaPlaylist;

export function isPlaylistText(head: Buffer | string): boolean {
  const text = typeof head === "string" ? head : head.subarray(0, 16).toString("latin1");
  return /^(\uFEFF|\xEF\xBB\xBF)?#EXTM3U/.test(text);
}

/** Attributes of a tag line (`NAME=value,NAME="quoted, value"`). */
export function attributes(list: string): Map<string, string> {
  const found = new Map<string, string>();
  const pattern = /([A-Z0-9-]+)=("[^"]*"|[^,]*)/g;
  for (const match of list.matchAll(pattern)) {
    found.set(match[1], match[2].replace(/^"(.*)"$/, "$1"));
  }
  return found;
}

function uri(value: string, base: URL): URL {
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    throw new PlaylistProblem(`it names a URI that is not a URL: ${value.slice(0, 100)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PlaylistProblem(`it names a ${url.protocol} URI; only http and https are read`);
  }
  return url;
}

function byteRange(spec: string, next: number): ByteRange {
  const match = /^(\d+)(?:@(\d+))?$/.exec(spec.trim());
  if (!match) throw new PlaylistProblem(`it has a malformed byte range: ${spec.slice(0, 40)}`);
  return { length: Number(match[1]), offset: match[2] !== undefined ? Number(match[2]) : next };
}

/** Parses a playlist, or throws PlaylistProblem saying why it is refused. */
export function parsePlaylist(text: string, base: URL): Playlist {
  if (text.length > PLAYLIST_BYTES) {
    throw new PlaylistProblem(`it is larger than ${PLAYLIST_BYTES} bytes`);
  }
  const lines = text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .map((line) => line.trim());
  if (lines[0] !== "#EXTM3U") throw new PlaylistProblem("it does not start with #EXTM3U");
  const master = lines.some(
    (line) => line.startsWith("#EXT-X-STREAM-INF:") || line.startsWith("#EXT-X-I-FRAME-STREAM-INF"),
  );
  return master ? parseMaster(lines, base) : parseMedia(lines, base);
}

function parseMaster(lines: string[], base: URL): MasterPlaylist {
  const variants: Variant[] = [];
  const otherUris: URL[] = [];
  let pending: Map<string, string> | null = null;
  for (const line of lines) {
    if (line.startsWith("#EXT-X-STREAM-INF:")) {
      pending = attributes(line.slice("#EXT-X-STREAM-INF:".length));
    } else if (
      line.startsWith("#EXT-X-MEDIA:") ||
      line.startsWith("#EXT-X-I-FRAME-STREAM-INF:") ||
      line.startsWith("#EXT-X-SESSION-KEY:")
    ) {
      const named = attributes(line.slice(line.indexOf(":") + 1)).get("URI");
      if (named) otherUris.push(uri(named, base));
    } else if (pending && line !== "" && !line.startsWith("#")) {
      const [width, height] = (pending.get("RESOLUTION") ?? "").split("x").map(Number);
      const bandwidth = Number(pending.get("BANDWIDTH"));
      variants.push({
        url: uri(line, base),
        bandwidth: Number.isFinite(bandwidth) ? bandwidth : null,
        width: width > 0 ? width : null,
        height: height > 0 ? height : null,
        codecs: pending.get("CODECS") ?? null,
      });
      pending = null;
      if (variants.length > MAX_VARIANTS) {
        throw new PlaylistProblem(`it lists more than ${MAX_VARIANTS} variants`);
      }
    }
  }
  if (variants.length === 0) throw new PlaylistProblem("its master playlist lists no variant");
  return { kind: "master", variants, otherUris };
}

function parseMedia(lines: string[], base: URL): MediaPlaylist {
  const segments: Segment[] = [];
  const keys: MediaPlaylist["keys"] = [];
  let init: MediaPlaylist["init"] = null;
  let duration: number | null = null;
  let range: ByteRange | null = null;
  let nextOffset = 0;
  let complete = false;
  let ended = false;
  let targetDuration: number | null = null;
  let firstSequence = 0;
  let dateTime: number | null = null;
  let total = 0;
  for (const line of lines) {
    if (line.startsWith("#EXTINF:")) {
      duration = Number(line.slice("#EXTINF:".length).split(",")[0]);
      if (!(Number.isFinite(duration) && duration > 0 && duration <= MAX_SEGMENT_SECONDS)) {
        throw new PlaylistProblem(`it has a segment duration that is not a time: ${line}`);
      }
    } else if (line.startsWith("#EXT-X-BYTERANGE:")) {
      range = byteRange(line.slice("#EXT-X-BYTERANGE:".length), nextOffset);
      nextOffset = range.offset + range.length;
    } else if (line.startsWith("#EXT-X-MAP:")) {
      const found = attributes(line.slice("#EXT-X-MAP:".length));
      const named = found.get("URI");
      if (!named) throw new PlaylistProblem("its EXT-X-MAP names no URI");
      if (init) throw new PlaylistProblem("it changes its init segment midway");
      const mapRange = found.get("BYTERANGE");
      init = { url: uri(named, base), range: mapRange ? byteRange(mapRange, 0) : null };
    } else if (line.startsWith("#EXT-X-KEY:")) {
      const found = attributes(line.slice("#EXT-X-KEY:".length));
      const method = found.get("METHOD") ?? "";
      const named = found.get("URI");
      if (method !== "NONE") keys.push({ method, url: named ? uri(named, base) : null });
    } else if (line === "#EXT-X-ENDLIST" || line === "#EXT-X-PLAYLIST-TYPE:VOD") {
      complete = true;
      if (line === "#EXT-X-ENDLIST") ended = true;
    } else if (line.startsWith("#EXT-X-MEDIA-SEQUENCE:")) {
      firstSequence = wholeNumber(line.slice("#EXT-X-MEDIA-SEQUENCE:".length), line);
    } else if (line.startsWith("#EXT-X-TARGETDURATION:")) {
      targetDuration = wholeNumber(line.slice("#EXT-X-TARGETDURATION:".length), line);
      if (targetDuration < 1 || targetDuration > MAX_SEGMENT_SECONDS) {
        throw new PlaylistProblem(`it has a target duration that is not a time: ${line}`);
      }
    } else if (line.startsWith("#EXT-X-PROGRAM-DATE-TIME:")) {
      const at = Date.parse(line.slice("#EXT-X-PROGRAM-DATE-TIME:".length));
      // A date that cannot be read is dropped, not fatal: captured_at then says "received".
      dateTime = Number.isFinite(at) ? at : null;
    } else if (line !== "" && !line.startsWith("#")) {
      if (duration === null) throw new PlaylistProblem(`a segment has no #EXTINF: ${line}`);
      segments.push({
        url: uri(line, base),
        range,
        duration,
        start: total,
        sequence: firstSequence + segments.length,
        programDateTime: dateTime,
      });
      total += duration;
      if (dateTime !== null) dateTime += duration * 1000;
      duration = null;
      range = null;
      if (segments.length > MAX_SEGMENTS) {
        throw new PlaylistProblem(`it lists more than ${MAX_SEGMENTS} segments`);
      }
    }
  }
  if (segments.length === 0) throw new PlaylistProblem("it lists no segments");
  return {
    kind: "media",
    segments,
    init,
    keys,
    complete,
    ended,
    targetDuration,
    duration: total,
  };
}

function wholeNumber(text: string, line: string): number {
  const value = Number(text.trim());
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new PlaylistProblem(`it has a tag whose value is not a whole number: ${line}`);
  }
  return value;
}

/**
 * The variant to read: the largest short side not above the requested resolution (the
 * smallest when all are larger), H.264 before other codecs, then the highest bandwidth; as
 * format-choice.ts picks among a platform's versions. Audio-only variants are never chosen.
 */
export function chooseVariant(
  variants: Variant[],
  requested: number,
): { variant: Variant; note: string | null } {
  const video = variants.filter(
    (v) => v.width !== null || !v.codecs || /avc|hvc|hev|vp0?9|av01/i.test(v.codecs),
  );
  if (video.length === 0) throw new PlaylistProblem("every variant is audio only");
  const shortSide = (v: Variant) => (v.width && v.height ? Math.min(v.width, v.height) : null);
  const codecRank = (v: Variant) => (/avc1/i.test(v.codecs ?? "avc1") ? 0 : 1);
  const order = (a: Variant, b: Variant) =>
    codecRank(a) - codecRank(b) || (b.bandwidth ?? 0) - (a.bandwidth ?? 0);
  const sized = video.filter((v) => shortSide(v) !== null);
  if (sized.length === 0) return { variant: [...video].sort(order)[0], note: null };
  const fitting = sized.filter((v) => (shortSide(v) as number) <= requested);
  if (fitting.length === 0) {
    const smallest = Math.min(...sized.map((v) => shortSide(v) as number));
    return {
      variant: sized.filter((v) => shortSide(v) === smallest).sort(order)[0],
      note: null,
    };
  }
  const best = Math.max(...fitting.map((v) => shortSide(v) as number));
  const variant = fitting.filter((v) => shortSide(v) === best).sort(order)[0];
  const note =
    best < requested
      ? `Requested ${requested}p, but the largest version this source offers is ${best}p (${variant.width}×${variant.height}); frames come from that version.`
      : null;
  return { variant, note };
}
