// An HLS VOD playlist with fMP4 (CMAF) segments, served to the relay as one fragmented MP4
// that is fetched a segment at a time, only where ffmpeg reads (decision 0330):
//
//   init segment | one sidx per track | slot 0 | slot 1 | … | slot N-1
//
// Each slot holds one segment's bytes followed by a `free` box up to the slot's fixed size, so
// a slot's place is known before its segment is fetched. The sidx boxes, written from the
// playlist's EXTINF durations, tell ffmpeg where each fragment starts and when: a seek goes
// straight to the segment that holds the wanted time, and only that segment is fetched. The
// samples' own times come from each fragment's tfdt, so frames keep the playlist's times.
// Every URI the playlists name is judged by the address rules before anything is fetched.
import { downloadFailed, errorForStatus, notAVideoLink, noVideoFound } from "./errors.ts";
import { fetchTextDocument } from "./fetch-text.ts";
import type { ByteRange, MediaPlaylist, Playlist, Segment } from "./hls-playlist.ts";
import {
  chooseVariant,
  PLAYLIST_DOCUMENT,
  PlaylistProblem,
  parsePlaylist,
} from "./hls-playlist.ts";
import { TsFragments } from "./hls-ts.ts";
import type { Opened } from "./open-media.ts";
import { checkHop, hopPolicy } from "./policy.ts";
import type { ChunkWriter, ServedMedia } from "./ranged-origin.ts";
import type { FetchOptions } from "./safe-fetch.ts";
import { isOverLimit, readBody, safeFetch } from "./safe-fetch.ts";

/** Largest segment (and so the slot size): a 10-second 4K segment is ~30 MB. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;
const INIT_BYTES = 1024 * 1024;
/** Segments kept in memory after ffmpeg read them (at least the last two, whatever size). */
const CACHED_SEGMENT_BYTES = 48 * 1024 * 1024;
/**
 * A fragment's start in the sidx is its EXTINF start plus this much per segment before it,
 * rounded down to the track's tick. EXTINF is rounded to the µs, so the sum of k of them may
 * fall short of the true start by k × 0.5 µs. A start written later than the true one only
 * sends a seek to the segment before (one more segment fetched); one written earlier could
 * start the decode after the wanted frame. A seek to a segment's first keyframe (as the job's
 * batched seeks do) still lands in that segment.
 */
const START_MARGIN_SECONDS = 0.5e-6;

export interface HlsOpenOptions {
  /** Requested short side: the variant chosen is the largest not above it. */
  resolution: number;
  /** The caller's own link (InvalidUrl for a playlist that cannot be read) or a platform's. */
  callersLink: boolean;
  /** The playlist's text when the first request already read all of it. */
  text?: string;
}

export interface OpenedHls {
  opened: Opened;
  resolutionNote: string | null;
}

/** Opens a VOD playlist (master or media) for the relay, or refuses it with the reason. */
export async function openHlsVod(
  url: URL,
  fetchOptions: FetchOptions,
  options: HlsOpenOptions,
): Promise<OpenedHls> {
  const refuse = (reason: string) =>
    options.callersLink
      ? notAVideoLink(`an HLS playlist that cannot be read: ${reason}`)
      : noVideoFound(`the HLS playlist at ${url.origin}${url.pathname} cannot be read: ${reason}`);
  const judged = (playlist: Playlist) => {
    const uris =
      playlist.kind === "master"
        ? [...playlist.variants.map((v) => v.url), ...playlist.otherUris]
        : [
            ...(playlist.init ? [playlist.init.url] : []),
            ...playlist.keys.flatMap((key) => (key.url ? [key.url] : [])),
            ...playlist.segments.map((s) => s.url),
          ];
    // All of them before any is fetched: one private URI refuses the whole playlist.
    for (const uri of uris) checkHop(uri, hopPolicy(uri, fetchOptions.policy));
    return playlist;
  };
  const read = async (at: URL, text?: string) => {
    const fetched =
      text !== undefined
        ? { text, url: at }
        : await fetchTextDocument(at, fetchOptions, PLAYLIST_DOCUMENT);
    try {
      return { playlist: judged(parsePlaylist(fetched.text, fetched.url)), url: fetched.url };
    } catch (error) {
      throw error instanceof PlaylistProblem ? refuse(error.message) : error;
    }
  };
  let { playlist, url: playlistUrl } = await read(url, options.text);
  let resolutionNote: string | null = null;
  if (playlist.kind === "master") {
    let chosen: ReturnType<typeof chooseVariant>;
    try {
      chosen = chooseVariant(playlist.variants, options.resolution);
    } catch (error) {
      throw error instanceof PlaylistProblem ? refuse(error.message) : error;
    }
    resolutionNote = chosen.note;
    const masterUrl = playlistUrl;
    if (chosen.variant.url.href === masterUrl.href) throw refuse("a variant points back at it");
    ({ playlist, url: playlistUrl } = await read(chosen.variant.url));
    // One level only: a variant that is a master again is a chain (or a loop) of playlists.
    if (playlist.kind === "master") {
      throw refuse("a variant is itself a master playlist (playlists that point at each other)");
    }
  }
  const media = playlist as MediaPlaylist;
  if (media.keys.length > 0) {
    throw refuse(
      `its segments are encrypted (${media.keys[0].method}), which Stills does not read`,
    );
  }
  if (!media.complete) {
    throw refuse(
      "it is a live playlist (no #EXT-X-ENDLIST); only complete (VOD) playlists are read",
    );
  }
  // Without EXT-X-MAP the segments are MPEG-TS, remuxed one at a time (decision 0332).
  const served = await HlsVodMedia.open(media, fetchOptions, refuse);
  return {
    opened: { kind: "media", media: served, contentLength: null, url: playlistUrl },
    resolutionNote,
  };
}

interface Track {
  id: number;
  timescale: number;
  /**
   * What ffmpeg subtracts from this track's decode times for its edit list (the first edit's
   * media time less any empty edit before it, in track ticks): its seeks compare fragment
   * starts on that shifted clock.
   */
  editShift: number;
}

/** What the view needs of a segment (an HLS playlist's or a DASH manifest's). */
export type SegmentRef = Pick<Segment, "url" | "range" | "duration" | "start">;

/** A list of segments to serve: fMP4 with its init segment, or MPEG-TS (init null). */
export interface SegmentList {
  segments: SegmentRef[];
  init: { url: URL; range: ByteRange | null } | null;
  duration: number;
}

type Transform = (bytes: Buffer, index: number) => Promise<Buffer>;

export class HlsVodMedia implements ServedMedia {
  readonly contentType = "video/mp4";
  /** Which segments were fetched, in order (tests and logs). */
  readonly fetchedSegments: number[] = [];
  private header = Buffer.alloc(0);
  private readonly segments: SegmentRef[];
  private readonly fetchOptions: FetchOptions;
  private readonly transform: Transform;
  private readonly cache = new Map<number, Promise<Buffer>>();
  private readonly sizes = new Map<number, number>();

  private constructor(segments: SegmentRef[], fetchOptions: FetchOptions, transform: Transform) {
    this.segments = segments;
    this.fetchOptions = fetchOptions;
    this.transform = transform;
  }

  static async open(
    playlist: SegmentList,
    fetchOptions: FetchOptions,
    refuse: (reason: string) => Error,
  ): Promise<HlsVodMedia> {
    let initBytes: Buffer;
    let media: HlsVodMedia;
    let tracks: Track[];
    if (playlist.init) {
      const init = playlist.init;
      initBytes = await fetchPart(init.url, init.range, INIT_BYTES, fetchOptions);
      tracks = tracksOf(initBytes, refuse);
      const known = tracks;
      media = new HlsVodMedia(playlist.segments, fetchOptions, async (bytes, index) =>
        asFragment(bytes, known, refuse, index),
      );
    } else {
      // MPEG-TS: each segment remuxed to a fragment; the first gives the init and the clock.
      const ts = new TsFragments(playlist.segments, SEGMENT_BYTES - 8, fetchOptions.signal);
      const explain = (index: number) => (error: unknown) => {
        if (fetchOptions.signal?.aborted) throw fetchOptions.signal.reason;
        throw refuse(
          `segment ${index} is not MPEG-TS that can be read: ${(error as Error).message}`,
        );
      };
      const { url, range } = playlist.segments[0];
      const first = await fetchPart(url, range, SEGMENT_BYTES - 8, fetchOptions);
      const begun = await ts.begin(first, playlist.duration).catch(explain(0));
      initBytes = begun.init;
      tracks = tracksOf(initBytes, refuse);
      const known = tracks;
      media = new HlsVodMedia(playlist.segments, fetchOptions, (bytes, index) =>
        ts
          .fragment(bytes, index)
          .catch(explain(index))
          .then((fragment) => asFragment(fragment, known, refuse, index)),
      );
      media.fetchedSegments.push(0);
      media.cache.set(0, Promise.resolve(asFragment(begun.fragment, tracks, refuse, 0)));
      media.sizes.set(0, begun.fragment.length);
    }
    // The first segment gives each track's first time; ffmpeg's probe reads it anyway.
    const starts = fragmentTimes(await media.segment(0), refuse);
    const indexes = tracks.map((track, index) =>
      sidx(track, starts.get(track.id) ?? 0, playlist.segments, tracks.length - 1 - index),
    );
    media.header = Buffer.concat([initBytes, ...indexes]);
    return media;
  }

  async size(): Promise<number> {
    return this.header.length + this.segments.length * SEGMENT_BYTES;
  }

  async pump(start: number, end: number, write: ChunkWriter, signal: AbortSignal): Promise<void> {
    let position = start;
    if (position < this.header.length) {
      const stop = Math.min(end + 1, this.header.length);
      await write(this.header.subarray(position, stop));
      position = stop;
    }
    while (position <= end) {
      signal.throwIfAborted();
      const slot = Math.floor((position - this.header.length) / SEGMENT_BYTES);
      const slotStart = this.header.length + slot * SEGMENT_BYTES;
      const slotEnd = Math.min(slotStart + SEGMENT_BYTES, end + 1);
      const bytes = await this.slotBytes(slot);
      // Segment bytes, then the free box's header, then zeros to the slot's end.
      let offset = position - slotStart;
      while (offset < slotEnd - slotStart) {
        const chunk =
          offset < bytes.length
            ? bytes.subarray(offset, Math.min(bytes.length, slotEnd - slotStart))
            : ZEROS.subarray(0, Math.min(ZEROS.length, slotEnd - slotStart - offset));
        await write(chunk);
        offset += chunk.length;
      }
      position = slotEnd;
    }
  }

  async close(): Promise<void> {
    this.cache.clear();
  }

  /** A slot's meaningful bytes: the segment and the free box header after it. */
  private async slotBytes(slot: number): Promise<Buffer> {
    const segment = await this.segment(slot);
    const padding = Buffer.alloc(8);
    padding.writeUInt32BE(SEGMENT_BYTES - segment.length, 0);
    padding.write("free", 4, "latin1");
    return Buffer.concat([segment, padding]);
  }

  private segment(index: number): Promise<Buffer> {
    const cached = this.cache.get(index);
    if (cached) {
      this.cache.delete(index);
      this.cache.set(index, cached);
      return cached;
    }
    const { url, range } = this.segments[index];
    this.fetchedSegments.push(index);
    const fetching = fetchPart(url, range, SEGMENT_BYTES - 8, this.fetchOptions).then((bytes) =>
      this.transform(bytes, index),
    );
    this.cache.set(index, fetching);
    fetching.then(
      (bytes) => {
        this.sizes.set(index, bytes.length);
        this.evict();
      },
      () => this.cache.delete(index),
    );
    return fetching;
  }

  private evict(): void {
    let total = [...this.sizes.values()].reduce((sum, size) => sum + size, 0);
    for (const index of this.cache.keys()) {
      if (total <= CACHED_SEGMENT_BYTES || this.cache.size <= 2) break;
      total -= this.sizes.get(index) ?? 0;
      this.sizes.delete(index);
      this.cache.delete(index);
    }
  }
}

const ZEROS = Buffer.alloc(64 * 1024);

/** One part (a whole file, or a byte range of it) through safeFetch, at most maxBytes. */
export async function fetchPart(
  url: URL,
  range: { offset: number; length: number } | null,
  maxBytes: number,
  fetchOptions: FetchOptions,
): Promise<Buffer> {
  if (range && range.length > maxBytes) {
    throw downloadFailed(
      `an HLS segment of ${range.length} bytes is over the ${maxBytes}-byte limit`,
    );
  }
  const response = await safeFetch(url, {
    ...fetchOptions,
    maxRedirects: 3,
    headers: {
      ...fetchOptions.headers,
      ...(range ? { range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {}),
    },
  });
  if (response.status >= 400) {
    response.body.destroy();
    throw errorForStatus(response.status, `${response.url.origin}${response.url.pathname}`);
  }
  if (range && response.status !== 206) {
    response.body.destroy();
    throw downloadFailed("an HLS byte-range segment was answered without a range");
  }
  return readBody(response.body, maxBytes).catch((error: unknown) => {
    throw isOverLimit(error)
      ? downloadFailed(`an HLS segment at ${url.pathname} is over the ${maxBytes}-byte limit`)
      : error;
  });
}

// --- ISO BMFF boxes, only as far as this view needs them ---

interface Box {
  type: string;
  start: number;
  /** Where the box's content starts (after size, type and any 64-bit size). */
  body: number;
  end: number;
}

function* boxes(bytes: Buffer, from: number, to: number): Generator<Box> {
  let at = from;
  while (at + 8 <= to) {
    let size = bytes.readUInt32BE(at);
    const type = bytes.toString("latin1", at + 4, at + 8);
    let body = at + 8;
    if (size === 1) {
      if (at + 16 > to) return;
      size = Number(bytes.readBigUInt64BE(at + 8));
      body = at + 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < body - at || at + size > to) throw new Error(`the ${type} box overruns its parent`);
    yield { type, start: at, body, end: at + size };
    at += size;
  }
  if (at !== to) throw new Error("the boxes do not add up");
}

function child(bytes: Buffer, parent: Box, type: string): Box | undefined {
  for (const box of boxes(bytes, parent.body, parent.end)) if (box.type === type) return box;
  return undefined;
}

function tracksOf(init: Buffer, refuse: (reason: string) => Error): Track[] {
  try {
    const moov = [...boxes(init, 0, init.length)].find((box) => box.type === "moov");
    if (!moov) throw new Error("no moov box");
    if (!child(init, moov, "mvex")) throw new Error("not a fragmented MP4 (no mvex box)");
    const mvhd = child(init, moov, "mvhd");
    if (!mvhd) throw new Error("no mvhd box");
    const movieTimescale = init.readUInt32BE(mvhd.body + (init[mvhd.body] === 1 ? 20 : 12));
    const tracks: Track[] = [];
    for (const trak of boxes(init, moov.body, moov.end)) {
      if (trak.type !== "trak") continue;
      const tkhd = child(init, trak, "tkhd");
      const mdia = child(init, trak, "mdia");
      const mdhd = mdia && child(init, mdia, "mdhd");
      if (!tkhd || !mdhd) throw new Error("a track without tkhd or mdhd");
      const tkhdV1 = init[tkhd.body] === 1;
      const mdhdV1 = init[mdhd.body] === 1;
      const timescale = init.readUInt32BE(mdhd.body + (mdhdV1 ? 20 : 12));
      const edts = child(init, trak, "edts");
      const elst = edts && child(init, edts, "elst");
      tracks.push({
        id: init.readUInt32BE(tkhd.body + (tkhdV1 ? 20 : 12)),
        timescale,
        editShift: elst ? editShiftOf(init, elst, timescale, movieTimescale) : 0,
      });
    }
    if (tracks.length === 0 || tracks.some((t) => t.timescale === 0)) throw new Error("no tracks");
    return tracks;
  } catch (error) {
    throw refuse(`its init segment is not a fragmented MP4: ${(error as Error).message}`);
  }
}

/** ffmpeg's time offset for an edit list: the first media time less the empty edits before. */
function editShiftOf(init: Buffer, elst: Box, timescale: number, movieTimescale: number): number {
  const v1 = init[elst.body] === 1;
  const count = init.readUInt32BE(elst.body + 4);
  let empty = 0;
  for (let i = 0, at = elst.body + 8; i < count; i += 1, at += v1 ? 20 : 12) {
    const duration = v1 ? Number(init.readBigUInt64BE(at)) : init.readUInt32BE(at);
    const mediaTime = v1 ? Number(init.readBigInt64BE(at + 8)) : init.readInt32BE(at + 4);
    if (mediaTime === -1) {
      empty += duration;
      continue;
    }
    return mediaTime - Math.round((empty * timescale) / (movieTimescale || 1));
  }
  return 0;
}

/** Each track's first decode time (tfdt) in a fragment. */
function fragmentTimes(fragment: Buffer, refuse: (reason: string) => Error): Map<number, number> {
  const times = new Map<number, number>();
  for (const moof of boxes(fragment, 0, fragment.length)) {
    if (moof.type !== "moof") continue;
    for (const traf of boxes(fragment, moof.body, moof.end)) {
      if (traf.type !== "traf") continue;
      const tfhd = child(fragment, traf, "tfhd");
      const tfdt = child(fragment, traf, "tfdt");
      if (!tfhd) throw refuse("a fragment without tfhd");
      const id = fragment.readUInt32BE(tfhd.body + 4);
      if (tfdt && !times.has(id)) {
        times.set(
          id,
          fragment[tfdt.body] === 1
            ? Number(fragment.readBigUInt64BE(tfdt.body + 4))
            : fragment.readUInt32BE(tfdt.body + 4),
        );
      }
    }
  }
  return times;
}

/**
 * A fetched segment as it sits in its slot: its moof and mdat boxes as they are, every other
 * top-level box (styp, its own sidx, prft, emsg) renamed `free` so that ffmpeg reads the
 * view's one index only. A fragment that names absolute file offsets cannot move and is refused.
 */
function asFragment(
  bytes: Buffer,
  tracks: Track[],
  refuse: (reason: string) => Error,
  index: number,
): Buffer {
  if (bytes[0] === 0x47) throw refuse(`segment ${index} is MPEG-TS; only fMP4 segments are read`);
  const copy = Buffer.from(bytes);
  let moofs = 0;
  try {
    for (const box of boxes(copy, 0, copy.length)) {
      if (box.type === "mdat") continue;
      if (box.type !== "moof") {
        copy.write("free", box.start + 4, "latin1");
        continue;
      }
      moofs += 1;
      for (const traf of boxes(copy, box.body, box.end)) {
        if (traf.type !== "traf") continue;
        const tfhd = child(copy, traf, "tfhd");
        if (!tfhd) throw new Error("a track fragment without tfhd");
        if (copy.readUInt32BE(tfhd.body) & 0x1) throw new Error("it names absolute offsets");
        const id = copy.readUInt32BE(tfhd.body + 4);
        if (!tracks.some((t) => t.id === id)) throw new Error(`it names track ${id}`);
      }
    }
  } catch (error) {
    throw refuse(`segment ${index} is not an fMP4 fragment: ${(error as Error).message}`);
  }
  if (moofs === 0) throw refuse(`segment ${index} is not an fMP4 fragment (no moof box)`);
  return copy;
}

/**
 * One track's segment index over every slot: fragment k starts at the track's first time plus
 * the EXTINFs before it (plus a margin, START_MARGIN_SECONDS), each slot SEGMENT_BYTES long.
 * `sidxesAfter`: how many sidx boxes of the same size follow this one (first_offset skips them).
 */
function sidx(
  track: Track,
  firstTime: number,
  segments: SegmentRef[],
  sidxesAfter: number,
): Buffer {
  const size = 40 + 12 * segments.length;
  if (segments.length > 0xffff) throw new Error("too many segments for one sidx");
  const box = Buffer.alloc(size);
  box.writeUInt32BE(size, 0);
  box.write("sidx", 4, "latin1");
  box.writeUInt32BE(0x01000000, 8); // version 1, no flags
  box.writeUInt32BE(track.id, 12);
  box.writeUInt32BE(track.timescale, 16);
  // On ffmpeg's clock (less the edit shift); it reads the field as signed.
  box.writeBigUInt64BE(BigInt.asUintN(64, BigInt(firstTime - track.editShift)), 20);
  box.writeBigUInt64BE(BigInt(sidxesAfter * size), 28);
  box.writeUInt16BE(segments.length, 38);
  const startOf = (k: number) =>
    Math.floor((segments[k].start + (k + 2) * START_MARGIN_SECONDS) * track.timescale);
  const last = segments.at(-1) as SegmentRef;
  // The last fragment ends at the video's end on ffmpeg's clock: with the edit shift given back,
  // ffmpeg's stream duration (its end less its start) is the playlist's, not that less the shift.
  const end = Math.round((last.start + last.duration) * track.timescale) + track.editShift;
  segments.forEach((_, k) => {
    const at = 40 + 12 * k;
    const next = k + 1 < segments.length ? startOf(k + 1) : Math.max(end, startOf(k) + 1);
    box.writeUInt32BE(SEGMENT_BYTES, at);
    box.writeUInt32BE(next - startOf(k), at + 4);
    box.writeUInt32BE(0x90000000, at + 8); // starts with a SAP of type 1
  });
  return box;
}
