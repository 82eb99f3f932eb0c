// Keyframes of an MP4/MOV read from its own index (the moov box's sample tables), without
// running ffprobe and without reading a single frame. ffprobe's lookup (keyframeProbeArgs)
// seeks to every time and reads one packet there: over the relay each is a request to the
// origin, one after another, and the run itself costs ~45 ms of CPU to start. The index
// already says where every keyframe is, when it is shown and how large it is; an MP4 served
// for the web holds it in one box, at the front (faststart) or at the end.
//
// Only the plain, common shape is read: one video track, sample tables (not fragments), at
// most one edit that skips the first tick(s) of the media (what encoders write for B-frames)
// and optionally an empty edit before it. Anything else answers null and ffprobe is asked as
// before. A keyframe answered here that differs from ffmpeg's own choice costs time, never
// exactness: a batch input that reads too little is decoded again alone (decode.ts).
import { open } from "node:fs/promises";

/**
 * A keyframe found by probeKeyframesAt (probe.ts: from this index, or by ffprobe): its
 * stream, time (absolute s) and packet's bytes.
 */
export interface KeyframeRow {
  streamIndex: number;
  keyframe: number;
  /** The keyframe's own size in the file, when it is known. */
  bytes: number | null;
}

/** Reads `length` bytes at `start` (fewer only at the end of the file). */
export type ByteReader = (start: number, length: number) => Promise<Buffer>;

// An index larger than this is not worth holding in memory for a lookup: ffprobe reads it.
const MAX_MOOV_BYTES = 32 * 1024 * 1024;
// Top-level boxes walked before giving up (ftyp, free, mdat, moov… are a handful).
const MAX_TOP_LEVEL_BOXES = 64;

const BOX_TYPE = /^[a-zA-Z0-9 ©]{4}$/;
const FIRST_BOXES = new Set(["ftyp", "moov", "free", "skip", "wide", "mdat"]);

export interface Box {
  type: string;
  /** Offset of the box's own first byte (its header). */
  head: number;
  /** Offset of the box's payload and its end, within the buffer (or the file). */
  start: number;
  end: number;
}

export function boxesIn(data: Buffer, from: number, to: number): Box[] | null {
  const boxes: Box[] = [];
  let at = from;
  while (at + 8 <= to) {
    let size = data.readUInt32BE(at);
    const type = data.toString("latin1", at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) return null;
      size = Number(data.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < header || at + size > to) return null;
    boxes.push({ type, head: at, start: at + header, end: at + size });
    at += size;
  }
  return boxes;
}

export function child(data: Buffer, parent: Box, type: string): Box | null {
  return boxesIn(data, parent.start, parent.end)?.find((b) => b.type === type) ?? null;
}

export function path(data: Buffer, parent: Box, ...types: string[]): Box | null {
  let box: Box | null = parent;
  for (const type of types) {
    if (!box) return null;
    box = child(data, box, type);
  }
  return box;
}

/** Finds the moov box by walking the top-level boxes, and reads it whole. */
export async function readMoov(read: ByteReader, size: number): Promise<Buffer | null> {
  let at = 0;
  for (let n = 0; n < MAX_TOP_LEVEL_BOXES && at + 8 <= size; n++) {
    const head = await read(at, 16);
    if (head.length < 8) return null;
    let boxSize = head.readUInt32BE(0);
    const type = head.toString("latin1", 4, 8);
    // Not an ISO/QuickTime file (Matroska, WebM…): stop at the first bytes, read nothing more.
    if (!BOX_TYPE.test(type) || (n === 0 && !FIRST_BOXES.has(type))) return null;
    let header = 8;
    if (boxSize === 1) {
      if (head.length < 16) return null;
      boxSize = Number(head.readBigUInt64BE(8));
      header = 16;
    } else if (boxSize === 0) {
      boxSize = size - at;
    }
    if (boxSize < header) return null;
    // Fragments keep their samples outside the moov: not the shape read here.
    if (type === "moof") return null;
    if (type === "moov") {
      if (boxSize > MAX_MOOV_BYTES || at + boxSize > size) return null;
      const moov = await read(at, boxSize);
      return moov.length === boxSize ? moov : null;
    }
    at += boxSize;
  }
  return null;
}

/**
 * The moov and where its box starts, for a file that is top-level boxes end to end, none
 * running "to the end of the file", with exactly one moov and no fragments: a file to which a
 * box can be added after its end and found there (ffmpeg/mp4-spans.ts). Else null.
 */
export async function readSoleMoov(
  read: ByteReader,
  size: number,
): Promise<{ moov: Buffer; at: number } | null> {
  let at = 0;
  let found: { moov: Buffer; at: number } | null = null;
  for (let n = 0; n < MAX_TOP_LEVEL_BOXES && at + 8 <= size; n++) {
    const head = await read(at, 16);
    if (head.length < 8) return null;
    let boxSize = head.readUInt32BE(0);
    const type = head.toString("latin1", 4, 8);
    if (!BOX_TYPE.test(type) || (n === 0 && !FIRST_BOXES.has(type)) || type === "moof") {
      return null;
    }
    if (boxSize === 1) {
      if (head.length < 16) return null;
      boxSize = Number(head.readBigUInt64BE(8));
    }
    if (boxSize < 8 || at + boxSize > size) return null;
    if (type === "moov") {
      if (found || boxSize > MAX_MOOV_BYTES) return null;
      const moov = await read(at, boxSize);
      if (moov.length !== boxSize) return null;
      found = { moov, at };
    }
    at += boxSize;
  }
  return at === size ? found : null;
}

// Samples in one track's tables: more than a day at 60 frames a second is not a real video.
const MAX_SAMPLES = 10_000_000;

/** A table's entries (count at header − 4), each read at its offset; null if it overruns. */
function entries(
  data: Buffer,
  box: Box,
  header: number,
  size: number,
  read: (at: number) => number,
  count = data.readUInt32BE(box.start + header - 4),
): number[] | null {
  if (box.start + header + count * size > box.end) return null;
  const values: number[] = [];
  for (let i = 0; i < count; i++) values.push(read(box.start + header + i * size));
  return values;
}

/** A run-length table (sample count, value) expanded to one value per sample, up to `most`. */
function runLengths(
  data: Buffer,
  box: Box,
  most: number,
  value: (at: number) => number,
): number[] | null {
  const runs = entries(data, box, 8, 8, (at) => at);
  if (!runs) return null;
  const values: number[] = [];
  for (const at of runs) {
    const samples = data.readUInt32BE(at);
    if (values.length + samples > most) return null;
    const v = value(at);
    for (let s = 0; s < samples; s++) values.push(v);
  }
  return values;
}

/** A full box's version (its first payload byte). */
export function version(data: Buffer, box: Box): number {
  return data.readUInt8(box.start);
}

export interface VideoTrack {
  /** Its position among the file's tracks: the stream index ffmpeg gives it. */
  streamIndex: number;
  timescale: number;
  /** Ticks each sample's presentation is moved by (the edit list), in the media's timescale. */
  shiftTicks: number;
  /** Where the edit list's media edit starts (ticks of media time); null without an edit list. */
  editStart: number | null;
  /** Every sample's decoding time, ticks from the first. */
  dts: number[];
  /** Composition offsets per sample, or null without a ctts box (every offset 0). */
  ctts: number[] | null;
  /** 1-based numbers of the sync samples, or null when every sample is one. */
  sync: number[] | null;
  sizes: number[];
  /** The last sample's duration in ticks (the stts's last delta). */
  lastDuration: number;
  /** The track's box and its sample table box, for what only some callers need. */
  trak: Box;
  stbl: Box;
}

function readTrack(
  data: Buffer,
  trak: Box,
  streamIndex: number,
  movieScale: number,
  maxSamples: number,
) {
  const hdlr = path(data, trak, "mdia", "hdlr");
  if (!hdlr || data.toString("latin1", hdlr.start + 8, hdlr.start + 12) !== "vide") return null;
  const mdhd = path(data, trak, "mdia", "mdhd");
  const stbl = path(data, trak, "mdia", "minf", "stbl");
  if (!mdhd || !stbl) return null;
  const timescale =
    version(data, mdhd) === 1
      ? data.readUInt32BE(mdhd.start + 20)
      : data.readUInt32BE(mdhd.start + 12);
  if (!(timescale > 0)) return null;

  // The edit list: nothing, one edit of the media from media_time, or an empty edit then that.
  let shiftTicks = 0;
  // Where the media edit starts in the media's own time, when there is an edit list.
  let editStart: number | null = null;
  const elst = path(data, trak, "edts", "elst");
  if (elst) {
    const wide = version(data, elst) === 1;
    const count = data.readUInt32BE(elst.start + 4);
    const entry = wide ? 20 : 12;
    const edits: { duration: number; mediaTime: number }[] = [];
    for (let i = 0; i < count; i++) {
      const at = elst.start + 8 + i * entry;
      if (at + entry > elst.end) return null;
      edits.push(
        wide
          ? {
              duration: Number(data.readBigUInt64BE(at)),
              mediaTime: Number(data.readBigInt64BE(at + 8)),
            }
          : { duration: data.readUInt32BE(at), mediaTime: data.readInt32BE(at + 4) },
      );
    }
    const media = edits.filter((e) => e.mediaTime !== -1);
    const empty = edits.filter((e) => e.mediaTime === -1);
    if (media.length > 1 || empty.length > 1) return null;
    if (empty.length === 1 && edits[0].mediaTime !== -1) return null;
    if (!(movieScale > 0)) return null;
    editStart = media[0]?.mediaTime ?? 0;
    shiftTicks = editStart - Math.round(((empty[0]?.duration ?? 0) * timescale) / movieScale);
  }

  const stts = child(data, stbl, "stts");
  const stsz = child(data, stbl, "stsz");
  if (!stts || !stsz) return null;
  // Run-length tables expand to one value per sample, never past the samples the file has.
  const sampleCount = data.readUInt32BE(stsz.start + 8);
  if (sampleCount > maxSamples) return null;
  const dts = runLengths(data, stts, sampleCount, (at) => data.readUInt32BE(at + 4));
  if (!dts || dts.length !== sampleCount) return null;
  const lastDuration = dts.length > 0 ? dts[dts.length - 1] : 0;
  let tick = 0;
  for (let i = 0; i < dts.length; i++) {
    const delta = dts[i];
    dts[i] = tick;
    tick += delta;
  }
  const uniform = data.readUInt32BE(stsz.start + 4);
  const sizes = uniform
    ? new Array<number>(sampleCount).fill(uniform)
    : entries(data, stsz, 12, 4, (at) => data.readUInt32BE(at), sampleCount);
  if (!sizes || sizes.length !== sampleCount) return null;
  const cttsBox = child(data, stbl, "ctts");
  const ctts = cttsBox
    ? runLengths(data, cttsBox, sampleCount, (at) => data.readInt32BE(at + 4))
    : null;
  if (cttsBox && ctts?.length !== sampleCount) return null;
  const stss = child(data, stbl, "stss");
  const sync = stss ? entries(data, stss, 8, 4, (at) => data.readUInt32BE(at)) : null;
  if (stss && !sync) return null;
  return {
    streamIndex,
    timescale,
    shiftTicks,
    editStart,
    dts,
    ctts,
    sync,
    sizes,
    lastDuration,
    trak,
    stbl,
  } satisfies VideoTrack;
}

/** The first video track's tables, or null for any shape not read here. */
export function firstVideoTrack(moov: Buffer, maxSamples = MAX_SAMPLES): VideoTrack | null {
  const root: Box = { type: "moov", head: 0, start: 8, end: moov.length };
  const boxes = boxesIn(moov, root.start, root.end);
  if (!boxes || boxes.some((b) => b.type === "mvex")) return null;
  const mvhd = boxes.find((b) => b.type === "mvhd");
  const movieScale = mvhd
    ? moov.readUInt32BE(mvhd.start + (version(moov, mvhd) === 1 ? 20 : 12))
    : 0;
  const traks = boxes.filter((b) => b.type === "trak");
  for (const [index, trak] of traks.entries()) {
    const track = readTrack(moov, trak, index, movieScale, maxSamples);
    if (track) return track;
  }
  return null;
}

/**
 * The keyframe at or before each time (seconds, as ffprobe's lookup takes them), as ffmpeg's
 * seek chooses it: the last sync sample whose decoding time, moved by the edit list, is not
 * after the time; with its presentation time and its size. Null when the index cannot be read.
 */
export function keyframesFromIndex(moov: Buffer, times: number[]): KeyframeRow[] | null {
  const track = firstVideoTrack(moov);
  const sync = track && syncSamples(track);
  if (!track || !sync) return null;
  const { timescale, sizes } = track;
  const ptsTicks = (i: number) => presentationTicks(track, i);
  return times.map((t) => {
    const target = t * timescale;
    let chosen = sync[0];
    for (const n of sync) {
      if (ptsTicks(n - 1) <= target + 1e-6) chosen = n;
      else break;
    }
    const i = chosen - 1;
    const pts = ptsTicks(i) / timescale;
    return { streamIndex: track.streamIndex, keyframe: pts, bytes: sizes[i] };
  });
}

/** 1-based numbers of the sync samples, checked against the table; null when there are none. */
export function syncSamples(track: VideoTrack): number[] | null {
  const count = track.dts.length;
  const sync = track.sync ?? track.dts.map((_, i) => i + 1);
  if (sync.length === 0 || sync.some((n) => n < 1 || n > count)) return null;
  return sync;
}

/** Sample i's presentation time in ticks of the media's timescale, as ffmpeg's demuxer gives it. */
function presentationTicks(track: VideoTrack, i: number): number {
  return track.dts[i] + (track.ctts?.[i] ?? 0) - track.shiftTicks;
}

/** Every sync sample's presentation time (ticks of `timescale`), in the file's order. */
export interface IndexedKeyframes {
  streamIndex: number;
  timescale: number;
  ticks: number[];
}

export function keyframeTicksFromIndex(moov: Buffer): IndexedKeyframes | null {
  const track = firstVideoTrack(moov);
  const sync = track && syncSamples(track);
  if (!track || !sync) return null;
  return {
    streamIndex: track.streamIndex,
    timescale: track.timescale,
    ticks: sync.map((n) => presentationTicks(track, n - 1)),
  };
}

/** A file's moov, where its box starts when it is the file's sole one (readSoleMoov), its size. */
export interface MoovRead {
  moov: Buffer;
  moovAt: number | null;
  fileSize: number;
}

/** The moov read through `read`: the sole one's walk, else the first moov; null if none. */
export async function readMoovOnce(read: ByteReader, size: number): Promise<MoovRead | null> {
  const sole = await readSoleMoov(read, size);
  const moov = sole?.moov ?? (await readMoov(read, size));
  return moov ? { moov, moovAt: sole?.at ?? null, fileSize: size } : null;
}

// A relay input's moov, read once for the probe, the keyframe lookup and the sample layout that
// a job starts together (each used to read it through the relay on its own: a HEAD and a few
// ranged requests each). Kept a little while for a later lookup of the same job (listKeyframes),
// a few inputs at once, and a large moov only while it is being read.
const MOOV_READS_KEPT = 4;
const MOOV_READ_KEPT_MS = 30_000;
const MOOV_KEPT_BYTES = 8 * 1024 * 1024;
const moovReads = new Map<string, Promise<MoovRead | null>>();

/**
 * The moov of `input` (readMoovOnce through openByteReader); null for any other file or on any
 * failure. A relay's address (http://127.0.0.1, a token of its own per job) is read once and
 * shared by every caller; a local file is read each time (it may be written again between
 * jobs, and its reads cost no round trip).
 */
export function moovOf(input: string, signal?: AbortSignal): Promise<MoovRead | null> {
  const read = () => withByteReader(input, signal, readMoovOnce).catch(() => null);
  if (!/^https?:/.test(input)) return read();
  const known = moovReads.get(input);
  if (known) return known;
  const reading = read();
  if (moovReads.size >= MOOV_READS_KEPT) {
    moovReads.delete(moovReads.keys().next().value as string);
  }
  moovReads.set(input, reading);
  const forget = () => {
    if (moovReads.get(input) === reading) moovReads.delete(input);
  };
  reading.then((found) => {
    // A failed read (an aborted job, say) is not kept for the next caller.
    if (!found || found.moov.length > MOOV_KEPT_BYTES) forget();
    else setTimeout(forget, MOOV_READ_KEPT_MS).unref();
  });
  return reading;
}

/** `parse` of the moov of `input` (moovOf); null on any failure or any other shape. */
export async function fromMoovOf<T>(
  input: string,
  signal: AbortSignal | undefined,
  parse: (found: MoovRead) => T | null,
): Promise<T | null> {
  const found = await moovOf(input, signal);
  try {
    return found ? parse(found) : null;
  } catch {
    return null;
  }
}

/** Reads the moov through `read` and answers `parse` of it; null on any failure. */
async function fromMoov<T>(
  read: ByteReader,
  size: number,
  parse: (moov: Buffer) => T | null,
): Promise<T | null> {
  try {
    const moov = await readMoov(read, size);
    return moov ? parse(moov) : null;
  } catch {
    return null;
  }
}

/** keyframeTicksFromIndex of the moov read through `read`; null on any failure. */
export function keyframeTicksFromMp4(
  read: ByteReader,
  size: number,
): Promise<IndexedKeyframes | null> {
  return fromMoov(read, size, keyframeTicksFromIndex);
}

/** keyframesFromIndex of the moov read through `read`; null on any failure. */
export function keyframesFromMp4(
  read: ByteReader,
  size: number,
  times: number[],
): Promise<KeyframeRow[] | null> {
  return fromMoov(read, size, (moov) => keyframesFromIndex(moov, times));
}

/** Reads `input`'s index with `use` through openByteReader, closed after; null if unopenable. */
export async function withByteReader<T>(
  input: string,
  signal: AbortSignal | undefined,
  use: (read: ByteReader, size: number) => Promise<T | null>,
): Promise<T | null> {
  const reader = await openByteReader(input, signal).catch(() => null);
  if (!reader) return null;
  try {
    return await use(reader.read, reader.size);
  } finally {
    await reader.close();
  }
}

/** A reader of a local file or of the loopback relay (exact byte ranges), and its size. */
export async function openByteReader(
  input: string,
  signal?: AbortSignal,
): Promise<{ read: ByteReader; size: number; close: () => Promise<void> } | null> {
  if (/^https?:/.test(input)) {
    // Only the loopback relay, as for ffmpeg (args.ts safeInputArgs).
    if (new URL(input).hostname !== "127.0.0.1") return null;
    const head = await fetch(input, { method: "HEAD", signal });
    const size = Number(head.headers.get("content-length"));
    if (!head.ok || !Number.isSafeInteger(size) || size <= 0) return null;
    return {
      size,
      read: async (start, length) => {
        const end = Math.min(start + length, size) - 1;
        if (end < start) return Buffer.alloc(0);
        const response = await fetch(input, {
          headers: { range: `bytes=${start}-${end}` },
          signal,
        });
        if (response.status !== 206) throw new Error(`range answered ${response.status}`);
        return Buffer.from(await response.arrayBuffer());
      },
      close: async () => {},
    };
  }
  const file = await open(input, "r");
  const { size } = await file.stat();
  return {
    size,
    read: async (start, length) => {
      const buffer = Buffer.alloc(Math.max(Math.min(length, size - start), 0));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, start);
      return buffer.subarray(0, bytesRead);
    },
    close: () => file.close(),
  };
}

/**
 * Where every sample of an H.264 track lies in the file and when it is shown: what the relay
 * needs to find each picture's NAL units as their bytes pass (unneeded-frames.ts).
 */
export interface SampleLayout {
  /** The track's stream index (ffmpeg's). */
  streamIndex: number;
  /** Each sample's first byte in the file and its size, in decoding order. */
  offsets: number[];
  sizes: number[];
  /** Each sample's presentation time, seconds, as ffmpeg's demuxer gives it. */
  pts: number[];
  /** Bytes of the length before each NAL unit (avcC's lengthSizeMinusOne + 1). */
  lengthSize: number;
  /** Some frame is shown before one decoded ahead of it: the track has B-frames. */
  reordered: boolean;
  /** Every sequence parameter set says frame_mbs_only_flag: frames only, no field pictures. */
  progressive: boolean;
  /** The track these samples are of (its tables; ffmpeg/mp4-spans.ts lists some of them). */
  track: VideoTrack;
}

// A layout holds three numbers a sample, and the picture index two more: past this many samples
// (4.6 hours at 30 fps) that is megabytes for a gain the job's other costs dwarf, and a few
// bytes of a hostile moov could ask for ten million. Such a file is decoded whole, as before.
export const MAX_LAYOUT_SAMPLES = 500_000;

/** Samples per chunk from the stsc box, one value per chunk; null if it does not add up. */
function samplesPerChunk(data: Buffer, stsc: Box, chunks: number): number[] | null {
  const runs = entries(data, stsc, 8, 12, (at) => at);
  if (!runs || runs.length === 0) return null;
  const perChunk: number[] = [];
  for (let r = 0; r < runs.length; r++) {
    const first = data.readUInt32BE(runs[r]);
    const next = r + 1 < runs.length ? data.readUInt32BE(runs[r + 1]) : chunks + 1;
    const count = data.readUInt32BE(runs[r] + 4);
    if (first < 1 || next <= first || next > chunks + 1) return null;
    for (let c = first; c < next; c++) perChunk.push(count);
  }
  return perChunk.length === chunks ? perChunk : null;
}

/** Each sample's first byte in the file, in decoding order (stco or co64 with stsc). */
export function sampleOffsets(moov: Buffer, track: VideoTrack): number[] | null {
  const { stbl, sizes } = track;
  const stco = child(moov, stbl, "stco");
  const co64 = child(moov, stbl, "co64");
  const stsc = child(moov, stbl, "stsc");
  if (!stsc || (!stco && !co64)) return null;
  const chunkOffsets = stco
    ? entries(moov, stco, 8, 4, (at) => moov.readUInt32BE(at))
    : entries(moov, co64 as Box, 8, 8, (at) => Number(moov.readBigUInt64BE(at)));
  if (!chunkOffsets) return null;
  const perChunk = samplesPerChunk(moov, stsc, chunkOffsets.length);
  if (!perChunk) return null;
  const offsets: number[] = [];
  for (let c = 0; c < chunkOffsets.length && offsets.length < sizes.length; c++) {
    let at = chunkOffsets[c];
    for (let k = 0; k < perChunk[c] && offsets.length < sizes.length; k++) {
      offsets.push(at);
      at += sizes[offsets.length - 1];
    }
  }
  return offsets.length === sizes.length ? offsets : null;
}

/** The first video track's sample layout when it is H.264 (avc1/avc3 with avcC); else null. */
export function sampleLayoutFromIndex(moov: Buffer): SampleLayout | null {
  const track = firstVideoTrack(moov, MAX_LAYOUT_SAMPLES);
  if (!track) return null;
  // ffmpeg starts an edit at the first frame shown at or after its start, and this index moves
  // every frame by the start itself: the two agree only when a frame starts there (a copy cut
  // with -ss inside a frame does not, and its times would be off by the rest of that frame).
  const { editStart } = track;
  if (editStart !== null && !track.dts.some((d, i) => d + (track.ctts?.[i] ?? 0) === editStart)) {
    return null;
  }
  const { stbl, sizes } = track;
  const stsd = child(moov, stbl, "stsd");
  // One sample description: a second could change the NAL length size mid-track.
  if (!stsd || moov.readUInt32BE(stsd.start + 4) !== 1) return null;
  const entry = boxesIn(moov, stsd.start + 8, stsd.end)?.[0];
  if (!entry || (entry.type !== "avc1" && entry.type !== "avc3")) return null;
  // A visual sample entry's fields take 78 bytes before its child boxes.
  const avcC = boxesIn(moov, entry.start + 78, entry.end)?.find((b) => b.type === "avcC");
  if (!avcC || avcC.end - avcC.start < 5) return null;
  const lengthSize = (moov.readUInt8(avcC.start + 4) & 3) + 1;
  if (lengthSize === 3) return null;
  const progressive = framesOnly(moov.subarray(avcC.start, avcC.end));
  if (progressive === null) return null;
  const offsets = sampleOffsets(moov, track);
  if (!offsets) return null;
  // As ffmpeg turns ticks into seconds (× av_q2d of the time base), so both count alike.
  const tick = 1 / track.timescale;
  const pts = sizes.map((_, i) => presentationTicks(track, i) * tick);
  const reordered = pts.some((t, i) => i > 0 && t < pts[i - 1]);
  return {
    streamIndex: track.streamIndex,
    offsets,
    sizes,
    pts,
    lengthSize,
    reordered,
    progressive,
    track,
  };
}

/**
 * What a job reads of an MP4's index, once: the video's sample layout (ffmpeg/unneeded-frames.ts)
 * and the moov itself, with where it starts when it is the file's sole moov and a box can be
 * added after the file's end (readSoleMoov; ffmpeg/mp4-spans.ts), else null.
 */
export interface Mp4Index {
  layout: SampleLayout;
  moov: Buffer;
  moovAt: number | null;
  fileSize: number;
}

/** The H.264 MP4's index read through `read`; null on any failure or any other shape. */
export async function mp4IndexFrom(read: ByteReader, size: number): Promise<Mp4Index | null> {
  const found = await readMoovOnce(read, size).catch(() => null);
  return found && mp4IndexOfMoov(found);
}

/** The index of a moov already read (moovOf); null for any other shape. */
export function mp4IndexOfMoov(found: MoovRead): Mp4Index | null {
  const { moov, fileSize } = found;
  try {
    const layout = sampleLayoutFromIndex(moov);
    // Samples the file does not hold are an index that lies: not one to walk.
    const inFile = layout?.offsets.every((at, i) => at + layout.sizes[i] <= fileSize);
    if (!layout || !inFile) return null;
    return { layout, moov, moovAt: found.moovAt, fileSize };
  } catch {
    return null;
  }
}

/** The sample layout of mp4IndexFrom. */
export async function sampleLayoutFromMp4(
  read: ByteReader,
  size: number,
): Promise<SampleLayout | null> {
  return (await mp4IndexFrom(read, size))?.layout ?? null;
}

/** Reads an H.264 sequence parameter set's bits (emulation prevention bytes removed). */
export class BitReader {
  private readonly bytes: Uint8Array;
  private at = 0;

  constructor(nal: Uint8Array) {
    const bytes: number[] = [];
    for (let i = 0; i < nal.length; i++) {
      const escaped = i >= 2 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0;
      if (!escaped) bytes.push(nal[i]);
    }
    this.bytes = Uint8Array.from(bytes);
  }

  bit(): number {
    if (this.at >= this.bytes.length * 8) throw new Error("past the end of the parameter set");
    const value = (this.bytes[this.at >> 3] >> (7 - (this.at & 7))) & 1;
    this.at++;
    return value;
  }

  bits(n: number): number {
    let value = 0;
    for (let i = 0; i < n; i++) value = value * 2 + this.bit();
    return value;
  }

  /** Exp-Golomb, unsigned. */
  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) if (++zeros > 31) throw new Error("exp-Golomb code too long");
    return 2 ** zeros - 1 + this.bits(zeros);
  }

  se(): number {
    const k = this.ue();
    return k % 2 ? (k + 1) / 2 : -k / 2;
  }
}

// Profiles whose parameter sets carry chroma format, bit depth and scaling lists (H.264 7.3.2.1.1).
export const HIGH_PROFILES = new Set([
  100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135,
]);

/** An SPS read as far as frame_mbs_only_flag, and the reader left just after it. */
export interface SpsHead {
  profile: number;
  /** 1 is 4:2:0 (the value profiles without the field imply). */
  chromaFormat: number;
  bitDepthLumaMinus8: number;
  bitDepthChromaMinus8: number;
  widthInMbs: number;
  heightInMapUnits: number;
  /** 1: every picture is a frame, no field pictures. */
  frameMbsOnly: boolean;
  /** Positioned at direct_8x8_inference_flag, for a caller that reads on (the VUI). */
  reader: BitReader;
}

/**
 * H.264 7.3.2.1.1 from the NAL header up to frame_mbs_only_flag: the one walk through the
 * scaling lists and picture order fields both the index (framesOnly) and the probe
 * (mp4-probe.ts) need. Throws on a stream that breaks the syntax's bounds.
 */
export function readSpsHead(nal: Uint8Array): SpsHead {
  const r = new BitReader(nal.subarray(1));
  const profile = r.bits(8);
  r.bits(16); // constraint flags and level
  r.ue(); // seq_parameter_set_id
  let chromaFormat = 1;
  let bitDepthLumaMinus8 = 0;
  let bitDepthChromaMinus8 = 0;
  if (HIGH_PROFILES.has(profile)) {
    chromaFormat = r.ue();
    if (chromaFormat === 3) r.bit(); // separate_colour_plane_flag
    bitDepthLumaMinus8 = r.ue();
    bitDepthChromaMinus8 = r.ue();
    r.bit(); // qpprime_y_zero_transform_bypass_flag
    if (r.bit()) {
      for (let list = 0; list < (chromaFormat === 3 ? 12 : 8); list++) {
        if (!r.bit()) continue;
        let last = 8;
        let next = 8;
        for (let j = 0; j < (list < 6 ? 16 : 64) && next !== 0; j++) {
          next = (last + r.se() + 256) % 256;
          last = next === 0 ? last : next;
        }
      }
    }
  }
  r.ue(); // log2_max_frame_num_minus4
  const pocType = r.ue();
  if (pocType === 0) r.ue();
  else if (pocType === 1) {
    r.bit();
    r.se();
    r.se();
    const cycle = r.ue();
    if (cycle > 255) throw new Error("num_ref_frames_in_pic_order_cnt_cycle above 255");
    for (let i = 0; i < cycle; i++) r.se();
  }
  r.ue(); // max_num_ref_frames
  r.bit(); // gaps_in_frame_num_value_allowed_flag
  const widthInMbs = r.ue() + 1;
  const heightInMapUnits = r.ue() + 1;
  const frameMbsOnly = r.bit() === 1;
  return {
    profile,
    chromaFormat,
    bitDepthLumaMinus8,
    bitDepthChromaMinus8,
    widthInMbs,
    heightInMapUnits,
    frameMbsOnly,
    reader: r,
  };
}

/**
 * Whether every SPS in an avcC box codes frames only. A field picture may be a sample of its
 * own, and a frame picked by time would then need the other field's sample too, which the
 * hiding does not know of: such a stream is decoded whole. Null if the box cannot be read.
 */
function framesOnly(avcC: Uint8Array): boolean | null {
  try {
    const count = avcC[5] & 0x1f;
    if (count === 0) return null;
    let at = 6;
    let frames = true;
    for (let i = 0; i < count; i++) {
      const length = (avcC[at] << 8) | avcC[at + 1];
      const nal = avcC.subarray(at + 2, at + 2 + length);
      if (nal.length !== length || length < 4) return null;
      frames &&= readSpsHead(nal).frameMbsOnly;
      at += 2 + length;
    }
    return frames;
  } catch {
    return null;
  }
}
