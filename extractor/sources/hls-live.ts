// A live HLS playlist (no EXT-X-ENDLIST), watched as it slides (decision 0360): the playlist is
// reloaded no sooner than its target duration after the last reload began (RFC 8216 §6.3.4),
// and only the segments a job asks for are fetched, whole, each once. The bounds and the address
// rules of VOD playlists apply to every reload (decision 0330): every URI a reload names is
// judged before anything is fetched, every fetch goes through safeFetch.
import { downloadFailed, notAVideoLink } from "./errors.ts";
import { fetchTextDocument } from "./fetch-text.ts";
import type { MediaPlaylist, Playlist, Segment } from "./hls-playlist.ts";
import {
  chooseVariant,
  PLAYLIST_DOCUMENT,
  PlaylistProblem,
  parsePlaylist,
} from "./hls-playlist.ts";
import { looksLikeTs } from "./hls-ts.ts";
import { fetchPart } from "./hls-vod-origin.ts";
import { checkHop, hopPolicy } from "./policy.ts";
import type { FetchOptions } from "./safe-fetch.ts";

/** Largest live segment taken (as for VOD: a 10-second 4K segment is ~30 MB). */
export const LIVE_SEGMENT_BYTES = 64 * 1024 * 1024;
const INIT_BYTES = 1024 * 1024;
/** A stream stalls when its playlist gains no segment for this many target durations… */
export const STALL_TARGET_DURATIONS = 3;
/** …and at least this long (a 1-second target would otherwise give up after 3 s). */
export const STALL_MIN_SECONDS = 6;

export class LiveStreamStalled extends Error {}

export interface LiveOpenOptions {
  /** Requested short side: the variant chosen is the largest not above it. */
  resolution: number;
  /** The playlist's text when the first request already read all of it. */
  text?: string;
  /** The clock and the wait (tests may drive them); Date.now and a timer by default. */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The caller's link cannot be watched live: InvalidUrl with the reason. */
export function notALiveStream(reason: string) {
  return notAVideoLink(`mode live needs a live HLS playlist, and this link is ${reason}`);
}

export class LiveStream {
  readonly resolutionNote: string | null;
  /** Which segments were fetched (media sequence numbers), in order: tests and logs. */
  readonly fetchedSegments: number[] = [];
  private current: MediaPlaylist;
  private readonly url: URL;
  private readonly fetchOptions: FetchOptions;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private lastReloadStart: number;
  /** When the newest media sequence last grew (the stall clock). */
  private lastAdvance: number;
  private initBytes: Promise<Buffer> | null = null;

  private constructor(
    playlist: MediaPlaylist,
    url: URL,
    fetchOptions: FetchOptions,
    note: string | null,
    options: LiveOpenOptions,
    loadedAt: number,
  ) {
    this.current = playlist;
    this.url = url;
    this.fetchOptions = fetchOptions;
    this.resolutionNote = note;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? wait;
    this.lastReloadStart = loadedAt;
    this.lastAdvance = loadedAt;
  }

  /** Opens a live playlist (master or media), or refuses it with the reason. */
  static async open(
    url: URL,
    fetchOptions: FetchOptions,
    options: LiveOpenOptions,
  ): Promise<LiveStream> {
    const now = options.now ?? Date.now;
    let loadedAt = now();
    let { playlist, url: at } = await readPlaylist(url, fetchOptions, options.text);
    let note: string | null = null;
    if (playlist.kind === "master") {
      let chosen: ReturnType<typeof chooseVariant>;
      try {
        chosen = chooseVariant(playlist.variants, options.resolution);
      } catch (error) {
        throw error instanceof PlaylistProblem ? refuse(error.message) : error;
      }
      note = chosen.note;
      if (chosen.variant.url.href === at.href) throw refuse("a variant points back at it");
      loadedAt = now();
      ({ playlist, url: at } = await readPlaylist(chosen.variant.url, fetchOptions));
      if (playlist.kind === "master") {
        throw refuse("a variant is itself a master playlist (playlists that point at each other)");
      }
    }
    const media = playlist as MediaPlaylist;
    if (media.complete) {
      throw notALiveStream(
        "a complete (VOD) playlist (it has #EXT-X-ENDLIST or PLAYLIST-TYPE:VOD): use another mode",
      );
    }
    checkReadable(media);
    return new LiveStream(media, at, fetchOptions, note, options, loadedAt);
  }

  get playlist(): MediaPlaylist {
    return this.current;
  }

  /** Seconds between reloads: the target duration (the longest segment when it is missing). */
  get reloadSeconds(): number {
    const longest = Math.max(...this.current.segments.map((s) => s.duration));
    return this.current.targetDuration ?? Math.ceil(longest);
  }

  /** How long the playlist may stand still before the stream counts as stalled. */
  get stallSeconds(): number {
    return Math.max(STALL_TARGET_DURATIONS * this.reloadSeconds, STALL_MIN_SECONDS);
  }

  /**
   * Waits until a reload is allowed, then reloads. Throws LiveStreamStalled when the newest
   * segment has not changed for stallSeconds.
   */
  async reload(signal?: AbortSignal): Promise<MediaPlaylist> {
    const due = this.lastReloadStart + this.reloadSeconds * 1000;
    const waitMs = due - this.now();
    if (waitMs > 0) await this.sleep(waitMs, signal);
    signal?.throwIfAborted();
    this.lastReloadStart = this.now();
    const { playlist } = await readPlaylist(this.url, this.fetchOptions);
    if (playlist.kind === "master") throw refuse("its media playlist turned into a master");
    checkReadable(playlist);
    const newest = (p: MediaPlaylist) => (p.segments.at(-1) as Segment).sequence;
    if (newest(playlist) > newest(this.current) || playlist.ended) {
      this.lastAdvance = this.lastReloadStart;
    } else if (newest(playlist) < newest(this.current)) {
      throw downloadFailed(
        `the live playlist went back from media sequence ${newest(this.current)} to ${newest(playlist)}`,
        "The live stream restarted while we watched it.",
      );
    }
    this.current = playlist;
    if (!playlist.ended && this.now() - this.lastAdvance >= this.stallSeconds * 1000) {
      throw new LiveStreamStalled(
        `the live playlist gained no segment for ${Math.round((this.now() - this.lastAdvance) / 1000)} s (the wait is ${this.stallSeconds} s: ${STALL_TARGET_DURATIONS} target durations, at least ${STALL_MIN_SECONDS} s)`,
      );
    }
    return playlist;
  }

  /** The init segment (EXT-X-MAP), fetched once; none for MPEG-TS segments. */
  init(): Promise<Buffer> {
    const init = this.current.init;
    this.initBytes ??= init
      ? fetchPart(init.url, init.range, INIT_BYTES, this.fetchOptions)
      : Promise.resolve(Buffer.alloc(0));
    return this.initBytes;
  }

  /** One segment's bytes, whole. */
  async segment(segment: Segment): Promise<Buffer> {
    this.fetchedSegments.push(segment.sequence);
    const bytes = await fetchPart(
      segment.url,
      segment.range,
      LIVE_SEGMENT_BYTES,
      this.fetchOptions,
    );
    if (looksLikeTs(bytes) !== (this.current.init === null)) {
      throw refuse(
        `segment ${segment.sequence} is ${this.current.init ? "MPEG-TS beside an fMP4 init segment" : "not MPEG-TS, and there is no init segment (#EXT-X-MAP)"}`,
      );
    }
    return bytes;
  }
}

function refuse(reason: string) {
  return notAVideoLink(`an HLS playlist that cannot be read: ${reason}`);
}

/** What a live media playlist must be for us to read it: unencrypted segments. */
function checkReadable(media: MediaPlaylist): void {
  if (media.keys.length > 0) {
    throw refuse(
      `its segments are encrypted (${media.keys[0].method}), which Stills does not read`,
    );
  }
}

/** Fetches and parses a playlist and judges every URI it names before anything is fetched. */
async function readPlaylist(
  url: URL,
  fetchOptions: FetchOptions,
  text?: string,
): Promise<{ playlist: Playlist; url: URL }> {
  const fetched =
    text !== undefined
      ? { text, url }
      : await fetchTextDocument(url, fetchOptions, {
          ...PLAYLIST_DOCUMENT,
          // A live playlist changes under its URL: never a cached copy.
          headers: { "cache-control": "no-cache" },
        });
  let playlist: Playlist;
  try {
    playlist = parsePlaylist(fetched.text, fetched.url);
  } catch (error) {
    throw error instanceof PlaylistProblem ? refuse(error.message) : error;
  }
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
  return { playlist, url: fetched.url };
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}
