// The probe of an MP4/MOV from its own index (decision 0286): what ffprobe -show_streams says
// of the file, read from the moov the job reads anyway (mp4-index.ts), without starting
// ffprobe (~45 ms of CPU, most of it linking, plus its own reads of the moov through the relay
// before the first frame can be decoded).
//
// Only the plain shape is answered, where every field is read from one place and ffprobe's
// figures are known to follow from it (test/extractor/mp4-probe.test.ts compares them field by
// field on real encoded files): one H.264 video track (avc1, one sample description, one
// sequence parameter set, 8-bit 4:2:0, frames only, square pixels, no HDR transfer and no colr
// box), beside it only audio tracks, a constant frame rate, the edit list mp4-index.ts reads,
// no cover art. Anything else answers null and ffprobe is asked as before.
import type { HdrSource } from "./args.ts";
import type { MediaProbe, VideoProbe } from "./media-probe.ts";
import type { Box, ByteReader, VideoTrack } from "./mp4-index.ts";
import {
  boxesIn,
  child,
  firstVideoTrack,
  path,
  readMoov,
  readSpsHead,
  type SpsHead,
  version,
} from "./mp4-index.ts";

/** What ffprobe names the mov demuxer (format_name). */
export const MOV_FORMAT_NAME = "mov,mp4,m4a,3gp,3g2,mj2";

// Child boxes of an avc1 sample entry whose content is read here (pasp: only 1:1 passes) or
// does not change what ffprobe says (btrt: bit rates). colr, clap, fiel or anything else: ffprobe.
const KNOWN_ENTRY_BOXES = new Set(["avcC", "btrt", "pasp"]);

// ffmpeg's names of H.264 matrix_coefficients (H.273), as ffprobe prints color_space. 0 (RGB)
// and 8 (YCgCo) change the pixel format, and are left to ffprobe.
const MATRIX_NAMES: Record<number, string> = {
  1: "bt709",
  4: "fcc",
  5: "bt470bg",
  6: "smpte170m",
  7: "smpte240m",
  9: "bt2020nc",
  10: "bt2020c",
};
// PQ and HLG: the peak comes from side data that only ffprobe reads.
const HDR_TRANSFERS = new Set([16, 18]);

/** probeFromMoov of the moov read through `read`; null for any other file or shape. */
export async function probeFromMp4(read: ByteReader, size: number): Promise<MediaProbe | null> {
  const moov = await readMoov(read, size);
  return moov ? probeFromMoov(moov, size) : null;
}

/** The probe of a moov, or null for any shape not read here (then ffprobe is asked). */
export function probeFromMoov(moov: Buffer, fileSize: number): MediaProbe | null {
  try {
    return readProbe(moov, fileSize);
  } catch {
    return null;
  }
}

function readProbe(moov: Buffer, fileSize: number): MediaProbe | null {
  // Cover art becomes a stream of its own (attached_pic), numbered where ffmpeg meets it.
  if (moov.includes("covr", 0, "latin1")) return null;
  const root: Box = { type: "moov", head: 0, start: 8, end: moov.length };
  const boxes = boxesIn(moov, root.start, root.end);
  const mvhd = boxes?.find((b) => b.type === "mvhd");
  if (!boxes || !mvhd || boxes.some((b) => b.type === "mvex")) return null;
  const wide = version(moov, mvhd) === 1;
  const movieScale = moov.readUInt32BE(mvhd.start + (wide ? 20 : 12));
  const movieDuration = wide
    ? Number(moov.readBigUInt64BE(mvhd.start + 24))
    : moov.readUInt32BE(mvhd.start + 16);
  // The movie's own matrix turns every track: only the identity is read here.
  if (!identityMatrix(moov, mvhd.start + (wide ? 32 : 20) + 16)) return null;
  const handlers = boxes
    .filter((b) => b.type === "trak")
    .map((trak) => {
      const hdlr = path(moov, trak, "mdia", "hdlr");
      return hdlr ? moov.toString("latin1", hdlr.start + 8, hdlr.start + 12) : null;
    });
  // Video and sound only: subtitles, text, timecode and data tracks are ffprobe's to describe.
  if (handlers.filter((h) => h === "vide").length !== 1) return null;
  if (handlers.some((h) => h !== "vide" && h !== "soun")) return null;
  const track = firstVideoTrack(moov);
  if (!track || !(movieScale > 0)) return null;
  const video = readVideo(moov, track);
  if (!video) return null;
  // An edit that ends before the frames do (a trimmed file): ffmpeg's duration is the edit's.
  const edit = mediaEditSeconds(moov, track.trak, movieScale);
  const frames = video.durationSeconds ?? 0;
  if (edit !== null && Math.abs(edit - frames) > 1 / movieScale + 1e-9) return null;
  const seconds = movieDuration > 0 ? movieDuration / movieScale : video.durationSeconds;
  return {
    formatName: MOV_FORMAT_NAME,
    bytesPerSecond: seconds && seconds > 0 ? fileSize / seconds : null,
    video,
    hasAudio: handlers.includes("soun"),
    subtitles: [],
  };
}

function readVideo(moov: Buffer, track: VideoTrack): VideoProbe | null {
  const stsd = child(moov, track.stbl, "stsd");
  if (!stsd || moov.readUInt32BE(stsd.start + 4) !== 1) return null;
  const entry = boxesIn(moov, stsd.start + 8, stsd.end)?.[0];
  if (!entry || entry.type !== "avc1") return null;
  // A visual sample entry: 8 bytes of sample entry, 16 reserved, then width and height.
  const entryWidth = moov.readUInt16BE(entry.start + 24);
  const entryHeight = moov.readUInt16BE(entry.start + 26);
  const inside = boxesIn(moov, entry.start + 78, entry.end);
  if (!inside || inside.some((b) => !KNOWN_ENTRY_BOXES.has(b.type))) return null;
  const pasp = inside.find((b) => b.type === "pasp");
  if (pasp && moov.readUInt32BE(pasp.start) !== moov.readUInt32BE(pasp.start + 4)) return null;
  const avcC = inside.find((b) => b.type === "avcC");
  if (!avcC) return null;
  const sps = onlySps(moov.subarray(avcC.start, avcC.end));
  if (!sps || sps.width !== entryWidth || sps.height !== entryHeight) return null;

  const rotation = trackRotation(moov, track.trak);
  if (rotation === null) return null;
  const timing = trackTiming(track);
  if (!timing) return null;
  const quarterTurn = rotation === 90 || rotation === 270;
  return {
    streamIndex: track.streamIndex,
    codec: "h264",
    pixelFormat: sps.fullRange ? "yuvj420p" : "yuv420p",
    bitDepth: 8,
    durationSeconds: timing.durationSeconds,
    startTime: timing.startTime,
    width: sps.width,
    height: sps.height,
    displayWidth: quarterTurn ? sps.height : sps.width,
    displayHeight: quarterTurn ? sps.width : sps.height,
    rotation,
    frameRate: timing.frameRate,
    variableFrameRate: false,
    timeBase: { num: 1, den: track.timescale },
    colorMatrix: sps.matrix,
    hdr: null satisfies HdrSource | null,
  };
}

/**
 * Times as ffmpeg's demuxer gives them, for a track of one frame duration throughout (a
 * constant rate: avg_frame_rate and r_frame_rate are then both timescale ÷ that duration):
 * the first frame shown at 0 (what the edit list of every encoder's B-frame delay gives), and
 * the stream's duration the sum of its frames' durations. Any other timing: ffprobe.
 */
function trackTiming(
  track: VideoTrack,
): Pick<VideoProbe, "durationSeconds" | "startTime" | "frameRate"> | null {
  const { dts, timescale, lastDuration } = track;
  const count = dts.length;
  if (count < 2) return null;
  const step = dts[1] - dts[0];
  if (!(step > 0) || lastDuration !== step) return null;
  for (let i = 1; i < count; i++) if (dts[i] - dts[i - 1] !== step) return null;
  let first = Number.POSITIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    first = Math.min(first, dts[i] + (track.ctts?.[i] ?? 0) - track.shiftTicks);
  }
  if (first !== 0) return null;
  return {
    durationSeconds: (count * step) / timescale,
    startTime: 0,
    frameRate: timescale / step,
  };
}

/** The edit list's media edit's length in seconds (movie timescale), null without one. */
function mediaEditSeconds(moov: Buffer, trak: Box, movieScale: number): number | null {
  const elst = path(moov, trak, "edts", "elst");
  if (!elst) return null;
  const wide = version(moov, elst) === 1;
  const entry = wide ? 20 : 12;
  const count = moov.readUInt32BE(elst.start + 4);
  for (let i = 0; i < count; i++) {
    const at = elst.start + 8 + i * entry;
    if (at + entry > elst.end) return null;
    const duration = wide ? Number(moov.readBigUInt64BE(at)) : moov.readUInt32BE(at);
    const mediaTime = wide ? Number(moov.readBigInt64BE(at + 8)) : moov.readInt32BE(at + 4);
    if (mediaTime !== -1) return duration / movieScale;
  }
  return null;
}

/** 16.16 fixed point. */
const ONE = 0x10000;

/** A 3×3 matrix of tkhd/mvhd at `at` that is the identity (or only translates). */
function identityMatrix(data: Buffer, at: number): boolean {
  const m = Array.from({ length: 9 }, (_, i) => data.readInt32BE(at + i * 4));
  return m[0] === ONE && m[1] === 0 && m[2] === 0 && m[3] === 0 && m[4] === ONE && m[5] === 0;
}

/**
 * Clockwise quarter turns of the track's display matrix, as ffprobe's "rotation" (the
 * matrix's angle, av_display_rotation_get) becomes VideoProbe.rotation (probe.ts); null for a
 * matrix that scales, shears or turns by other than a quarter.
 */
function trackRotation(moov: Buffer, trak: Box): VideoProbe["rotation"] | null {
  const tkhd = child(moov, trak, "tkhd");
  if (!tkhd) return null;
  const at = tkhd.start + (version(moov, tkhd) === 1 ? 52 : 40);
  const [a, b, u, c, d, v] = Array.from({ length: 6 }, (_, i) => moov.readInt32BE(at + i * 4));
  if (u !== 0 || v !== 0) return null;
  const turns: [number, number, number, number, VideoProbe["rotation"]][] = [
    [ONE, 0, 0, ONE, 0],
    [0, ONE, -ONE, 0, 90],
    [-ONE, 0, 0, -ONE, 180],
    [0, -ONE, ONE, 0, 270],
  ];
  const found = turns.find(([ta, tb, tc, td]) => a === ta && b === tb && c === tc && d === td);
  return found ? found[4] : null;
}

interface SpsFacts {
  width: number;
  height: number;
  fullRange: boolean;
  matrix: string | null;
}

/** The avcC's one sequence parameter set, when it is of the shape read here; else null. */
function onlySps(avcC: Buffer): SpsFacts | null {
  if (avcC.length < 8 || (avcC[5] & 0x1f) !== 1) return null;
  const length = avcC.readUInt16BE(6);
  const nal = avcC.subarray(8, 8 + length);
  if (nal.length !== length || length < 4 || (nal[0] & 0x1f) !== 7) return null;
  return readSps(nal);
}

/** H.264 7.3.2.1.1 and E.1.1, as far as size, range and colour (the head: readSpsHead). */
function readSps(nal: Uint8Array): SpsFacts | null {
  let head: SpsHead;
  try {
    head = readSpsHead(nal);
  } catch {
    return null;
  }
  // 8-bit 4:2:0 frames only: no other chroma format or depth, no field pictures.
  if (head.chromaFormat !== 1 || head.bitDepthLumaMinus8 !== 0) return null;
  if (head.bitDepthChromaMinus8 !== 0 || !head.frameMbsOnly) return null;
  const r = head.reader;
  const widthInMbs = head.widthInMbs;
  const heightInMbs = head.heightInMapUnits;
  r.bit(); // direct_8x8_inference_flag
  let crop = [0, 0, 0, 0];
  if (r.bit()) crop = [r.ue(), r.ue(), r.ue(), r.ue()];
  // 4:2:0 frames crop in units of 2 pixels each way.
  const width = widthInMbs * 16 - 2 * (crop[0] + crop[1]);
  const height = heightInMbs * 16 - 2 * (crop[2] + crop[3]);
  let fullRange = false;
  let matrix: string | null = null;
  if (r.bit()) {
    // VUI
    if (r.bit()) {
      const idc = r.bits(8);
      if (idc === 255) {
        const sarWidth = r.bits(16);
        const sarHeight = r.bits(16);
        if (sarWidth !== sarHeight) return null;
      } else if (idc !== 0 && idc !== 1) return null;
    }
    if (r.bit()) r.bit(); // overscan
    if (r.bit()) {
      r.bits(3); // video_format
      fullRange = r.bit() === 1;
      if (r.bit()) {
        r.bits(8); // colour_primaries
        const transfer = r.bits(8);
        const coefficients = r.bits(8);
        if (HDR_TRANSFERS.has(transfer)) return null;
        if (coefficients !== 2) {
          matrix = MATRIX_NAMES[coefficients] ?? null;
          if (matrix === null) return null;
        }
      }
    }
  }
  return width > 0 && height > 0 ? { width, height, fullRange, matrix } : null;
}
