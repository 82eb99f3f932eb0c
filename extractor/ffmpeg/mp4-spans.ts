// An index of only the samples a run decodes. A sparse run over HTTP used to give ffmpeg one
// input per seek: each input opened the file again (its own requests, the whole moov read and
// parsed again) and its own decoder (~18 MB of 1080p pictures zeroed afresh). Here the run has
// one input: the file as it is, with its moov renamed `free` and a new moov after its end that
// lists only the wanted stretches of the video track (each from its keyframe to just past its
// last wanted frame). Every sample keeps its own bytes, its own offset in the file and its own
// decoding and presentation time, so the run's picking (ffmpeg/args.ts decodeArgs) sees the
// frames it would see after seeking, and nothing between the stretches is read.
//
// A kept sample's time is the original's because each duration in the new stts is the gap to
// the next kept sample; the first sample (at time 0, where every track's times start) is always
// kept, so the times of the rest add up as before. The edit list, sample description (codec,
// colour, aspect) and track header are the original's bytes.
import type { Box, SampleLayout, VideoTrack } from "./mp4-index.ts";
import { boxesIn, child, path, syncSamples } from "./mp4-index.ts";

/** A moov's video track and where its samples lie, worked out once for every run of a job. */
export interface SpanIndex {
  moov: Buffer;
  track: VideoTrack;
  offsets: readonly number[];
  /** 0-based sync samples in decoding order, ascending (every sample when the track says none). */
  syncStarts: readonly number[];
  isSync: ReadonlySet<number>;
}

/**
 * The span index of the layout's own track (the one the probe chose and the picture index
 * reads: never another track of the same moov), or null where its sync samples are not in
 * order from the first sample on.
 */
export function spanIndexOf(moov: Buffer, layout: SampleLayout): SpanIndex | null {
  const { track, offsets } = layout;
  const sync = syncSamples(track);
  if (sync?.[0] !== 1) return null;
  const syncStarts = sync.map((n) => n - 1);
  if (syncStarts.some((s, k) => k > 0 && s <= syncStarts[k - 1])) return null;
  return { moov, track, offsets, syncStarts, isSync: new Set(syncStarts) };
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const size = 8 + payload.reduce((sum, p) => sum + p.length, 0);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(size, 0);
  head.write(type, 4, "latin1");
  return Buffer.concat([head, ...payload]);
}

/** The box as it is in the file, header included. */
function raw(data: Buffer, b: Box): Buffer {
  return data.subarray(b.head, b.end);
}

/** A full box (version, flags 0) of 32-bit words. */
function fullBox(type: string, versionByte: number, words: number[]): Buffer {
  const payload = Buffer.alloc(4 + words.length * 4);
  payload.writeUInt8(versionByte, 0);
  for (let i = 0; i < words.length; i++) payload.writeUInt32BE(words[i] >>> 0, 4 + i * 4);
  return box(type, payload);
}

/** (count, value) runs of per-sample values, as stts and ctts hold them. */
function runs(values: number[]): number[] {
  const words: number[] = [];
  for (let i = 0; i < values.length; ) {
    let n = 1;
    while (i + n < values.length && values[i + n] === values[i]) n++;
    words.push(n, values[i]);
    i += n;
  }
  return [words.length / 2, ...words];
}

/**
 * The moov of a file that holds the same bytes but whose video track lists only `keep`
 * (sample indices in decoding order, ascending, the first being 0), one sample per chunk at its
 * own offset; the only track, so the video is stream 0. Null if `keep` does not fit the track.
 */
export function moovOfSamples(index: SpanIndex, keep: number[]): Buffer | null {
  const { moov, track, offsets } = index;
  const count = track.dts.length;
  if (keep.length === 0 || keep[0] !== 0) return null;
  for (let k = 1; k < keep.length; k++) {
    if (!(keep[k] > keep[k - 1]) || keep[k] >= count) return null;
  }
  const durations = keep.map((i, k) =>
    k + 1 < keep.length ? track.dts[keep[k + 1]] - track.dts[i] : durationOf(track, i),
  );
  // ffmpeg reads an stts delta as a signed 32-bit number: a longer gap between kept samples
  // (the first sample at 0 and a stretch minutes later at a fine timescale) cannot be listed.
  if (durations.some((d) => !(d >= 0 && d <= MAX_STTS_DELTA))) return null;
  const { stbl, ctts } = track;
  const stsd = child(moov, stbl, "stsd");
  const cttsBox = child(moov, stbl, "ctts");
  if (!stsd) return null;
  const tables = [raw(moov, stsd), fullBox("stts", 0, runs(durations))];
  if (ctts && cttsBox) {
    // Its version says whether offsets are signed: kept as the file has it.
    tables.push(fullBox("ctts", moov.readUInt8(cttsBox.start), runs(keep.map((i) => ctts[i]))));
  }
  if (track.sync) {
    const numbers = keep.flatMap((i, k) => (index.isSync.has(i) ? [k + 1] : []));
    tables.push(fullBox("stss", 0, [numbers.length, ...numbers]));
  }
  // One sample per chunk, each chunk at its sample's own offset (64-bit: any file size).
  tables.push(
    fullBox("stsc", 0, [1, 1, 1, 1]),
    fullBox("stsz", 0, [0, keep.length, ...keep.map((i) => track.sizes[i])]),
    co64(keep.map((i) => offsets[i])),
  );
  const newStbl = box("stbl", ...tables);
  const minf = path(moov, track.trak, "mdia", "minf");
  const mdia = path(moov, track.trak, "mdia");
  if (!minf || !mdia) return null;
  const newMinf = rebuilt(moov, minf, "stbl", newStbl);
  const newMdia = rebuilt(moov, mdia, "minf", newMinf);
  const trakChildren = (boxesIn(moov, track.trak.start, track.trak.end) ?? []).filter(
    // A track reference names other tracks, which this moov does not hold.
    (b) => b.type !== "tref",
  );
  const newTrak = box(
    "trak",
    ...trakChildren.map((b) => (b.type === "mdia" ? newMdia : raw(moov, b))),
  );
  const top = boxesIn(moov, 8, moov.length) ?? [];
  const mvhd = top.find((b) => b.type === "mvhd");
  if (!mvhd) return null;
  return box("moov", raw(moov, mvhd), newTrak);
}

const MAX_STTS_DELTA = 0x7fffffff;

function durationOf(track: VideoTrack, i: number): number {
  return i + 1 < track.dts.length ? track.dts[i + 1] - track.dts[i] : track.lastDuration;
}

function co64(offsets: number[]): Buffer {
  const payload = Buffer.alloc(8 + offsets.length * 8);
  payload.writeUInt32BE(offsets.length, 4);
  for (let i = 0; i < offsets.length; i++) payload.writeBigUInt64BE(BigInt(offsets[i]), 8 + i * 8);
  return box("co64", payload);
}

/** `parent` again with its child of type `type` replaced by `replacement`. */
function rebuilt(moov: Buffer, parent: Box, type: string, replacement: Buffer): Buffer {
  const children = boxesIn(moov, parent.start, parent.end) ?? [];
  return box(parent.type, ...children.map((b) => (b.type === type ? replacement : raw(moov, b))));
}

/** Bytes of a stretch's first sample read for its NAL unit types before it is judged. */
const HEAD_BYTES = 4096;
const IDR_SLICE = 5;

/** A stretch of kept samples: the file's bytes it covers, [start, end), and its first sample. */
export interface ByteSpan {
  start: number;
  end: number;
  first: number;
}

/**
 * One run's view of the file (what the relay serves it, sources/relay.ts): the file's own
 * bytes with its moov renamed `free`, then `moov`, the index of only the stretches the run
 * decodes. A stretch is decoded from its first sample with whatever the decoder holds from the
 * stretch before, which is right only if that sample is an IDR picture (it empties the
 * decoder's references); a sync sample need not be one (an open GOP's I-frame). So each
 * stretch's first sample is judged as its bytes pass the relay, and the run delivers a frame
 * only from a stretch judged clean (decode.ts BatchRun; the rest is decoded from its seeks).
 */
export class SpanView {
  readonly moov: Buffer;
  /** Where the file's own moov box starts (its type is served as `free`). */
  readonly moovAt: number;
  readonly fileSize: number;
  readonly spans: readonly ByteSpan[];
  /** For each slot, the time (absolute s) of the frame on screen then, by the index. */
  readonly shownAt: readonly number[];
  /** For each slot, the stretch its frame is decoded in. */
  private readonly spanOfSlot: readonly number[];
  private readonly sampleSizes: readonly number[];
  private readonly lengthSize: number;
  /** Each stretch's first bytes seen so far, and its judgement (null: not yet). */
  private readonly heads: Buffer[];
  private readonly clean: (boolean | null)[];

  constructor(init: {
    moov: Buffer;
    moovAt: number;
    fileSize: number;
    spans: ByteSpan[];
    shownAt: number[];
    spanOfSlot: number[];
    sampleSizes: number[];
    lengthSize: number;
  }) {
    this.moov = init.moov;
    this.moovAt = init.moovAt;
    this.fileSize = init.fileSize;
    this.spans = init.spans;
    this.shownAt = init.shownAt;
    this.spanOfSlot = init.spanOfSlot;
    this.sampleSizes = init.sampleSizes;
    this.lengthSize = init.lengthSize;
    this.heads = init.spans.map(() => Buffer.alloc(0));
    this.clean = init.spans.map(() => null);
  }

  /** The view's size: the file, then the new moov. */
  get size(): number {
    return this.fileSize + this.moov.length;
  }

  /** The stretch a read starting at `position` of the file falls in, or null. */
  spanAt(position: number): ByteSpan | null {
    return this.spans.find((s) => s.start <= position && position < s.end) ?? null;
  }

  /** Some stretch was judged not to begin with an IDR picture: the file has open GOPs. */
  get unclean(): boolean {
    return this.clean.includes(false);
  }

  /** Whether the stretch slot `slot`'s frame is decoded in began with an IDR picture. */
  startsClean(slot: number): boolean {
    return this.clean[this.spanOfSlot[slot]] === true;
  }

  /**
   * The file's bytes at `position` as the view serves them: the moov's type becomes `free`.
   * Each stretch's first sample is judged from them as they pass.
   */
  pass(position: number, chunk: Buffer): Buffer {
    this.judge(position, chunk);
    const type = this.moovAt + 4;
    if (position + chunk.length <= type || position >= type + 4) return chunk;
    const out = Buffer.from(chunk);
    for (let k = 0; k < 4; k++) {
      const at = type + k - position;
      if (at >= 0 && at < out.length) out[at] = "free".charCodeAt(k);
    }
    return out;
  }

  private judge(position: number, chunk: Buffer): void {
    const end = position + chunk.length;
    this.spans.forEach((span, i) => {
      if (this.clean[i] !== null) return;
      const wanted = Math.min(this.sampleSizes[span.first], HEAD_BYTES);
      const next = span.start + this.heads[i].length;
      // Only bytes that continue what was seen of the sample's start.
      if (next < position || next >= end) return;
      const take = chunk.subarray(next - position, next - position + wanted - this.heads[i].length);
      this.heads[i] = Buffer.concat([this.heads[i], take]);
      this.clean[i] = firstSliceIsIdr(
        this.heads[i],
        this.lengthSize,
        this.heads[i].length >= wanted,
      );
    });
  }
}

/**
 * Whether the first slice NAL unit of a sample's first bytes is an IDR slice: true or false,
 * or null while `head` ends before one and more may come (`complete`: no more will).
 */
export function firstSliceIsIdr(
  head: Buffer,
  lengthSize: number,
  complete: boolean,
): boolean | null {
  let at = 0;
  while (at + lengthSize < head.length) {
    let length = 0;
    for (let b = 0; b < lengthSize; b++) length = length * 256 + head[at + b];
    const type = head[at + lengthSize] & 0x1f;
    // A slice (1), a slice data partition (2–4) or an IDR slice (5): the picture itself.
    if (type >= 1 && type <= IDR_SLICE) return type === IDR_SLICE;
    if (length === 0) return false;
    at += lengthSize + length;
  }
  return complete ? false : null;
}

type OnScreen = { keep: Set<number>; shownAt: number[]; shown: number[] };
type ViewedFile = { moovAt: number; moovBytes: number; fileSize: number; lengthSize: number };

/**
 * The view that decodes the frames on screen at `slots` (absolute seconds) and the frame after
 * each, each from the sync sample before it: null where the file is not of that shape (a
 * stretch's samples out of file order, stretches whose bytes overlap or lie in the old moov, a
 * gap between kept samples too long for an stts, any table of a hostile moov that does not add
 * up): the batch then seeks as before.
 */
export function spanViewFor(
  index: SpanIndex,
  onScreen: OnScreen,
  file: ViewedFile,
): SpanView | null {
  try {
    return buildSpanView(index, onScreen, file);
  } catch {
    return null;
  }
}

function buildSpanView(index: SpanIndex, onScreen: OnScreen, file: ViewedFile): SpanView | null {
  const { syncStarts } = index;
  /** The sync sample at or before sample s in decoding order. */
  const syncBefore = (s: number): number => {
    let lo = 0;
    let hi = syncStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (syncStarts[mid] <= s) lo = mid;
      else hi = mid - 1;
    }
    return syncStarts[lo];
  };
  const kept = new Set<number>([0]);
  for (const s of onScreen.keep) for (let i = syncBefore(s); i <= s; i++) kept.add(i);
  const keep = [...kept].sort((a, b) => a - b);
  const moov = moovOfSamples(index, keep);
  if (!moov) return null;
  const { offsets } = index;
  const { sizes } = index.track;
  const spans: ByteSpan[] = [];
  const spanOfSample = new Map<number, number>();
  for (let k = 0; k < keep.length; k++) {
    const s = keep[k];
    const last = spans[spans.length - 1];
    if (k > 0 && s === keep[k - 1] + 1) {
      // A stretch is read front to back and judged from its first sample's bytes: its samples
      // must lie in the file in decoding order (chunk offsets may say otherwise).
      if (offsets[s] < last.end) return null;
      last.end = offsets[s] + sizes[s];
    } else {
      spans.push({ start: offsets[s], end: offsets[s] + sizes[s], first: s });
    }
    spanOfSample.set(s, spans.length - 1);
  }
  if (spans.some((span, k) => k > 0 && span.start < spans[k - 1].end)) return null;
  if (spans[spans.length - 1].end > file.fileSize) return null;
  // The old moov's type is served renamed: no sample may lie in it.
  const moovEnd = file.moovAt + file.moovBytes;
  if (spans.some((span) => span.start < moovEnd && file.moovAt < span.end)) return null;
  return new SpanView({
    moov,
    moovAt: file.moovAt,
    fileSize: file.fileSize,
    spans,
    shownAt: onScreen.shownAt,
    spanOfSlot: onScreen.shown.map((s) => spanOfSample.get(s) ?? -1),
    sampleSizes: sizes,
    lengthSize: file.lengthSize,
  });
}
