// The ffmpeg run both cheap passes share (best-candidates.ts, slides-scan.ts): decode one range
// of one stream, run the pass's filters, and write the kept pictures to stdout as raw pixels,
// each at its own pts (no frame is made up or dropped by the output's rate). showinfo in the
// filters logs each kept picture's pts on stderr, matched by SHOWINFO_FRAME.
import type { Rational } from "../ffmpeg/args.ts";
import { formatSeconds, safeInputArgs } from "../ffmpeg/args.ts";

export interface ScanRange {
  input: string;
  streamIndex: number;
  /** Absolute stream seconds to start at (range start + the video's start time). */
  seekSeconds: number;
  spanSeconds: number;
}

export interface ScanOutput {
  /** The filter chain, in order; it must end in a `format` of `pixelFormat`. */
  filters: string[];
  pixelFormat: "gray" | "rgb24";
  /** Decode keyframes only (`-skip_frame nokey`), for long spans. */
  keyframesOnly?: boolean;
}

export function scanPassArgs(range: ScanRange, output: ScanOutput): string[] {
  return [
    "-hide_banner",
    "-nostdin",
    "-nostats",
    "-loglevel",
    "level+info",
    // Scores and grids do not depend on which way up the picture is; sizes are the stored ones.
    "-noautorotate",
    "-copyts",
    ...(output.keyframesOnly ? ["-skip_frame", "nokey"] : []),
    "-ss",
    formatSeconds(range.seekSeconds),
    "-t",
    formatSeconds(range.spanSeconds),
    ...safeInputArgs(range.input),
    "-map",
    `0:${range.streamIndex}`,
    "-an",
    "-sn",
    "-dn",
    "-vf",
    output.filters.join(","),
    "-fps_mode",
    "passthrough",
    "-f",
    "rawvideo",
    "-pix_fmt",
    output.pixelFormat,
    "pipe:1",
  ];
}

/** One kept picture's line from showinfo: its pts, in the stream's time base. */
export const SHOWINFO_FRAME =
  /^\[Parsed_showinfo_\d+ @ [^\]]+\] \[info\] n:\s*\d+\s+pts:\s*(-?\d+)\s/;

/** A picture's pts as seconds from the video's first frame: the same product keyframes.ts and
 * decode.ts name a frame's time with. */
export function relativeSeconds(ticks: number, timeBase: Rational, startTime: number): number {
  const absolute = ticks * (timeBase.num / timeBase.den);
  return Math.round((absolute - startTime) * 1e6) / 1e6;
}
