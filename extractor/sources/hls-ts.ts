// MPEG-TS segments of an HLS VOD playlist, turned into the fMP4 fragments the relay's view
// serves (decision 0332). Each segment is remuxed alone (ffmpeg, stream copy of its first video
// stream, `mpegts` demuxer on stdin only), and its fragment's tfdt is then rewritten from the
// segment's own PES timestamps, so that the view's timeline is the playlist's: 0 is the first
// segment's first frame on screen (the video's, as the EXTINFs count from it; audio that starts
// earlier does not move it), and every frame keeps its time from there. A segment whose clock
// does not follow on (a discontinuity) is placed at its EXTINF start instead.
import { spawn } from "node:child_process";
import { MEDIA_TOOL_ENV, toolPath } from "../ffmpeg/process.ts";
import { mediaSpawnOptions } from "../media-sandbox.ts";
import { adoptMediaProcess } from "../priority.ts";

const PACKET = 188;
const CLOCK = 90_000;
const WRAP = 2 ** 33;
/** A segment whose first frame is further than this from its EXTINF start has a new clock. */
const DISCONTINUITY_SECONDS = 1;
/** Longest one segment's remux may take. */
const REMUX_MS = 30_000;

/** PMT stream types that carry video, as ffmpeg's mpegts demuxer maps them. */
const VIDEO_TYPES = new Set([0x01, 0x02, 0x10, 0x1b, 0x24, 0x42, 0xd1, 0xea]);

export interface TsTimes {
  /** PTS/DTS (90 kHz) of every PES of the first video stream, in stream order. */
  video: Array<{ pts: number; dts: number }>;
  /** Earliest PTS of the video in the segment (its first frame on screen). */
  earliest: number;
}

export function looksLikeTs(bytes: Buffer): boolean {
  return (
    bytes.length >= PACKET &&
    bytes[0] === 0x47 &&
    (bytes.length < 2 * PACKET || bytes[PACKET] === 0x47)
  );
}

/**
 * The timestamps of one segment, read from its PAT, PMT and PES headers. Throws when it is not
 * MPEG-TS or names no video stream.
 */
export function tsTimes(bytes: Buffer): TsTimes {
  if (!looksLikeTs(bytes)) throw new Error("it is not MPEG-TS (no sync byte)");
  let pmtPid: number | null = null;
  let videoPid: number | null = null;
  const video: TsTimes["video"] = [];
  let earliest = Number.POSITIVE_INFINITY;
  let anchor: number | null = null;
  const unwrap = (value: number) => {
    // Values near a wrap of the 33-bit clock stay ordered around the first one seen.
    if (anchor === null) anchor = value;
    let shifted = value;
    while (shifted - anchor > WRAP / 2) shifted -= WRAP;
    while (anchor - shifted > WRAP / 2) shifted += WRAP;
    return shifted;
  };
  for (let at = 0; at + PACKET <= bytes.length; at += PACKET) {
    if (bytes[at] !== 0x47) throw new Error(`it loses its sync at byte ${at}`);
    const start = (bytes[at + 1] & 0x40) !== 0;
    const pid = ((bytes[at + 1] & 0x1f) << 8) | bytes[at + 2];
    const adaptation = (bytes[at + 3] >> 4) & 0x3;
    let payload = at + 4;
    if (adaptation === 2 || adaptation === 0) continue;
    if (adaptation === 3) payload += 1 + bytes[at + 4];
    if (payload >= at + PACKET || !start) continue;
    if (pid === 0 && pmtPid === null) {
      const table = payload + 1 + bytes[payload];
      const sectionEnd = Math.min(
        at + PACKET,
        table + 3 + (((bytes[table + 1] & 0x0f) << 8) | bytes[table + 2]) - 4,
      );
      for (let entry = table + 8; entry + 4 <= sectionEnd; entry += 4) {
        const program = bytes.readUInt16BE(entry);
        if (program !== 0) {
          pmtPid = bytes.readUInt16BE(entry + 2) & 0x1fff;
          break;
        }
      }
    } else if (pid === pmtPid && videoPid === null) {
      const table = payload + 1 + bytes[payload];
      const sectionEnd = Math.min(
        at + PACKET,
        table + 3 + (((bytes[table + 1] & 0x0f) << 8) | bytes[table + 2]) - 4,
      );
      const infoLength = ((bytes[table + 10] & 0x0f) << 8) | bytes[table + 11];
      for (let entry = table + 12 + infoLength; entry + 5 <= sectionEnd; ) {
        const type = bytes[entry];
        const elementary = bytes.readUInt16BE(entry + 1) & 0x1fff;
        if (VIDEO_TYPES.has(type) && videoPid === null) videoPid = elementary;
        entry += 5 + (((bytes[entry + 3] & 0x0f) << 8) | bytes[entry + 4]);
      }
    } else if (pid === videoPid) {
      const times = pesTimes(bytes, payload, at + PACKET);
      if (!times) continue;
      const pts = unwrap(times.pts);
      const dts = times.dts === null ? pts : unwrap(times.dts);
      earliest = Math.min(earliest, pts);
      video.push({ pts, dts });
    }
  }
  if (videoPid === null || video.length === 0) throw new Error("it has no video stream");
  return { video, earliest };
}

function pesTimes(
  bytes: Buffer,
  at: number,
  end: number,
): { pts: number; dts: number | null } | null {
  if (at + 14 > end || bytes[at] !== 0 || bytes[at + 1] !== 0 || bytes[at + 2] !== 1) return null;
  const flags = bytes[at + 7] >> 6;
  if (flags !== 2 && flags !== 3) return null;
  const pts = timestamp(bytes, at + 9);
  if (flags === 3 && at + 19 <= end) return { pts, dts: timestamp(bytes, at + 14) };
  return { pts, dts: null };
}

function timestamp(bytes: Buffer, at: number): number {
  return (
    ((bytes[at] >> 1) & 0x07) * 2 ** 30 +
    bytes[at + 1] * 2 ** 22 +
    (bytes[at + 2] >> 1) * 2 ** 15 +
    bytes[at + 3] * 2 ** 7 +
    (bytes[at + 4] >> 1)
  );
}

/**
 * One segment remuxed by ffmpeg to a fragmented MP4 (init and one fragment), its first video
 * stream only, every packet kept (-copyinkf) so that the fragment's samples are the segment's
 * video PES in order. ffmpeg reads nothing but its stdin, with the mpegts demuxer only.
 */
export function remuxTs(segment: Buffer, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const args = [
    ...[
      "-hide_banner",
      "-v",
      "error",
      "-protocol_whitelist",
      "pipe",
      "-format_whitelist",
      "mpegts",
    ],
    ...["-f", "mpegts", "-i", "pipe:0", "-map", "0:v:0", "-c", "copy", "-copyinkf"],
    ...["-f", "mp4", "-movflags", "empty_moov+default_base_moof", "-frag_duration", "1000000000"],
    "pipe:1",
  ];
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(toolPath("ffmpeg"), args, {
      ...mediaSpawnOptions(MEDIA_TOOL_ENV),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const released = child.pid === undefined ? () => {} : adoptMediaProcess(child.pid);
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = "";
    let failure: Error | null = null;
    const kill = (why: Error) => {
      failure ??= why;
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    };
    const timer = setTimeout(() => kill(new Error(`its remux took over ${REMUX_MS} ms`)), REMUX_MS);
    const onAbort = () =>
      kill(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    child.stdout?.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) kill(new Error(`its remux is over ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString("utf8");
    });
    // ffmpeg may stop reading early (a broken segment): that is its exit status's to tell.
    child.stdin?.on("error", () => {});
    child.stdin?.end(segment);
    child.on("error", (error) => kill(error));
    child.on("close", (code) => {
      clearTimeout(timer);
      released();
      signal?.removeEventListener("abort", onAbort);
      if (failure) reject(failure);
      else if (code !== 0) {
        const line = stderr.trim().split("\n").at(-1) ?? "";
        reject(new Error(`ffmpeg could not remux it (exit ${code}${line ? `: ${line}` : ""})`));
      } else resolve(Buffer.concat(chunks));
    });
  });
}

// --- The remux's boxes: an init to keep, fragments whose tfdt is rewritten ---

interface Box {
  type: string;
  start: number;
  body: number;
  end: number;
}

function* topBoxes(bytes: Buffer, from: number, to: number): Generator<Box> {
  let at = from;
  while (at + 8 <= to) {
    const size = bytes.readUInt32BE(at);
    const type = bytes.toString("latin1", at + 4, at + 8);
    if (size < 8 || at + size > to) throw new Error(`the remux's ${type} box overruns`);
    yield { type, start: at, body: at + 8, end: at + size };
    at += size;
  }
}

function find(bytes: Buffer, parent: Box | null, type: string): Box | undefined {
  for (const box of topBoxes(bytes, parent ? parent.body : 0, parent ? parent.end : bytes.length)) {
    if (box.type === type) return box;
  }
  return undefined;
}

/** The video track's timescale in the remux's moov. */
function timescaleOf(init: Buffer): number {
  const moov = find(init, null, "moov");
  const trak = moov && find(init, moov, "trak");
  const mdia = trak && find(init, trak, "mdia");
  const mdhd = mdia && find(init, mdia, "mdhd");
  if (!mdhd) throw new Error("the remux has no mdhd box");
  return init.readUInt32BE(mdhd.body + (init[mdhd.body] === 1 ? 20 : 12));
}

/**
 * The remux's ftyp and moov, with an edit list (media time `shift`, in track ticks) added to the
 * track: the fragments' decode times are shifted up by it to stay positive (a B-frame video's
 * first decode time lies before its first presentation), and ffmpeg takes it off again.
 */
function initWithShift(remux: Buffer, shift: number, movieDuration: number): Buffer {
  const ftyp = find(remux, null, "ftyp");
  const moov = find(remux, null, "moov");
  if (!moov) throw new Error("the remux has no moov box");
  const trak = find(remux, moov, "trak");
  const tkhd = trak && find(remux, trak, "tkhd");
  if (!trak || !tkhd || find(remux, trak, "edts"))
    throw new Error("the remux's track is not as expected");
  const edts = Buffer.alloc(36);
  edts.writeUInt32BE(36, 0);
  edts.write("edts", 4, "latin1");
  edts.writeUInt32BE(28, 8);
  edts.write("elst", 12, "latin1");
  edts.writeUInt32BE(0, 16); // version 0, no flags
  edts.writeUInt32BE(1, 20);
  edts.writeUInt32BE(Math.min(0xffffffff, Math.max(0, Math.round(movieDuration))), 24);
  edts.writeInt32BE(shift, 28);
  edts.writeUInt32BE(0x00010000, 32); // rate 1.0
  const moovBytes = Buffer.concat([
    remux.subarray(moov.start, tkhd.end),
    edts,
    remux.subarray(tkhd.end, moov.end),
  ]);
  moovBytes.writeUInt32BE(moov.end - moov.start + 36, 0);
  moovBytes.writeUInt32BE(trak.end - trak.start + 36, trak.start - moov.start);
  return Buffer.concat([ftyp ? remux.subarray(ftyp.start, ftyp.end) : Buffer.alloc(0), moovBytes]);
}

/** The movie timescale (mvhd) of the remux. */
function movieTimescaleOf(init: Buffer): number {
  const moov = find(init, null, "moov");
  const mvhd = moov && find(init, moov, "mvhd");
  if (!mvhd) throw new Error("the remux has no mvhd box");
  return init.readUInt32BE(mvhd.body + (init[mvhd.body] === 1 ? 20 : 12));
}

/**
 * The remux's moof and mdat boxes (ftyp, moov, mfra left out), each tfdt moved up by `base`
 * ticks. Returns them with the number of samples they hold.
 */
function fragmentsMoved(remux: Buffer, base: number): { bytes: Buffer; samples: number } {
  const parts: Buffer[] = [];
  let samples = 0;
  for (const box of topBoxes(remux, 0, remux.length)) {
    if (box.type !== "moof" && box.type !== "mdat") continue;
    const copy = Buffer.from(remux.subarray(box.start, box.end));
    if (box.type === "moof") {
      for (const traf of topBoxes(copy, 8, copy.length)) {
        if (traf.type !== "traf") continue;
        const tfdt = find(copy, traf, "tfdt");
        const trun = find(copy, traf, "trun");
        if (!tfdt || !trun) throw new Error("the remux's fragment has no tfdt or trun");
        samples += copy.readUInt32BE(trun.body + 4);
        const v1 = copy[tfdt.body] === 1;
        const old = v1
          ? Number(copy.readBigUInt64BE(tfdt.body + 4))
          : copy.readUInt32BE(tfdt.body + 4);
        const moved = old + base;
        if (moved < 0) throw new Error("a fragment would start before the view's zero");
        if (v1) copy.writeBigUInt64BE(BigInt(moved), tfdt.body + 4);
        else if (moved <= 0xffffffff) copy.writeUInt32BE(moved, tfdt.body + 4);
        else throw new Error("a fragment's time is past what its tfdt can hold");
      }
    }
    parts.push(copy);
  }
  if (samples === 0) throw new Error("the remux holds no video sample");
  return { bytes: Buffer.concat(parts), samples };
}

export interface TsSegmentRef {
  /** Playlist time at which the segment starts (the EXTINFs before it). */
  start: number;
}

/**
 * The view's side of MPEG-TS segments: `begin` reads the first segment (the timeline's zero and
 * the init the view starts with), `fragment` turns any segment into its fragment.
 */
export class TsFragments {
  private zero = 0;
  private shift = 0;
  private timescale = CLOCK;
  private readonly segments: TsSegmentRef[];
  private readonly maxBytes: number;
  private readonly signal?: AbortSignal;

  constructor(segments: TsSegmentRef[], maxBytes: number, signal?: AbortSignal) {
    this.segments = segments;
    this.maxBytes = maxBytes;
    this.signal = signal;
  }

  /** The init (ftyp, moov with its edit list) and segment 0's fragment. */
  async begin(first: Buffer, duration: number): Promise<{ init: Buffer; fragment: Buffer }> {
    const times = tsTimes(first);
    const remux = await remuxTs(first, this.maxBytes, this.signal);
    this.timescale = timescaleOf(remux);
    this.zero = times.earliest;
    // The decode times before the first presentation (B-frames): moved up, taken off by the edit.
    const firstDts = this.sampleDts(times, remux);
    this.shift = Math.max(0, Math.ceil(((this.zero - firstDts) * this.timescale) / CLOCK));
    const init = initWithShift(remux, this.shift, duration * movieTimescaleOf(remux));
    return { init, fragment: this.place(times, remux, 0) };
  }

  async fragment(segment: Buffer, index: number): Promise<Buffer> {
    const times = tsTimes(segment);
    return this.place(times, await remuxTs(segment, this.maxBytes, this.signal), index);
  }

  /** The TS decode time of the remux's first sample (leading PES ffmpeg dropped, skipped). */
  private sampleDts(times: TsTimes, remux: Buffer): number {
    const { samples } = fragmentsMoved(remux, 0);
    const dropped = times.video.length - samples;
    if (dropped < 0) throw new Error("its remux holds more samples than it has video packets");
    return times.video[dropped].dts;
  }

  private place(times: TsTimes, remux: Buffer, index: number): Buffer {
    const firstDts = this.sampleDts(times, remux);
    // On the first segment's clock: exact, B-frame delay and all.
    let seconds = (firstDts - this.zero) / CLOCK;
    const startsAt = (times.earliest - this.zero) / CLOCK;
    const expected = this.segments[index]?.start ?? startsAt;
    if (Math.abs(startsAt - expected) > DISCONTINUITY_SECONDS) {
      // A new clock (EXT-X-DISCONTINUITY, or timestamps that jump): its earliest frame is
      // placed at its EXTINF start.
      seconds = expected - (times.earliest - firstDts) / CLOCK;
    }
    const base = Math.round(seconds * this.timescale) + this.shift;
    return fragmentsMoved(remux, base).bytes;
  }
}
