// Dense or sparse: how to cover the wanted times with as little decoding as possible, and never
// decode the same span twice. Times that share a keyframe interval (GOP) are read by one
// forward pass; a new ffmpeg run that seeks is started only where a keyframe lies far enough
// past the previous wanted time that skipping to it saves more than starting a process costs.
// Dense plans thus become one continuous decode; sparse ones one short run per cluster.
import type { DecodeGroup } from "./decode.ts";

export interface DecodeCostModel {
  /** Wall seconds to decode one second of this video. */
  decodeSecondsPerVideoSecond: number;
  /** Wall seconds to start ffmpeg, open the input and seek. */
  processStartSeconds: number;
}

// Measured on the 2-core dev machine: 1080p30 H.264 decodes at ~0.115 s per video second; a
// short ffmpeg run costs ~0.1 s before its first frame. Cost grows with pixels and frame rate.
const FULL_HD_PIXELS_PER_SECOND = 1920 * 1080 * 30;
const FULL_HD_DECODE_SECONDS_PER_SECOND = 0.115;
const PROCESS_START_SECONDS = 0.1;

export function decodeCostModel(video: {
  width: number;
  height: number;
  frameRate: number | null;
}): DecodeCostModel {
  const pixelsPerSecond = video.width * video.height * (video.frameRate ?? 30);
  return {
    decodeSecondsPerVideoSecond:
      (FULL_HD_DECODE_SECONDS_PER_SECOND * pixelsPerSecond) / FULL_HD_PIXELS_PER_SECOND,
    processStartSeconds: PROCESS_START_SECONDS,
  };
}

/** Seconds of video that must be skippable before a fresh seek pays for itself. */
export function minimumSkipSeconds(model: DecodeCostModel): number {
  return model.processStartSeconds / Math.max(model.decodeSecondsPerVideoSecond, 1e-6);
}

// Asking ffprobe where the keyframes are is a run of its own before the first frame (measured
// ~0.07 s on a local file, more through the relay).
const KEYFRAME_LOOKUP_SECONDS = 0.1;

/**
 * Whether seeks before these candidates could save more than asking for their keyframes
 * costs. A seek before times[i] skips at most the gap since times[i-1], and its own run's
 * start costs minimumSkip of decoding: a plan whose gaps barely pass minimumSkip (six frames
 * two seconds apart at 720p) decodes straight through whatever the keyframes are.
 */
export function keyframesWorthAsking(
  times: number[],
  candidates: number[],
  minimumSkip: number,
  model: DecodeCostModel,
): boolean {
  let skippable = 0;
  for (const i of candidates) if (i > 0) skippable += times[i] - times[i - 1] - minimumSkip;
  return skippable * model.decodeSecondsPerVideoSecond > KEYFRAME_LOOKUP_SECONDS;
}

/** Indexes i where a seek before times[i] might pay: worth asking where its keyframe is. */
export function seekCandidates(times: number[], minimumSkip: number): number[] {
  const candidates: number[] = [];
  for (let i = 1; i < times.length; i++) {
    if (times[i] - times[i - 1] > minimumSkip) candidates.push(i);
  }
  return candidates;
}

/**
 * Splits ascending unique times into decode groups. `keyframeBefore(i)` is the keyframe at or
 * before times[i] (same clock), or null when unknown: unknown never splits, because a seek
 * that lands before the previous wanted time would decode that span twice.
 */
export function planDecodeGroups(
  times: number[],
  keyframeBefore: (i: number) => number | null,
  minimumSkip: number,
): DecodeGroup[] {
  if (times.length === 0) return [];
  const first = times[0];
  const groups: DecodeGroup[] = [
    { seekSeconds: first > minimumSkip ? first : null, times: [first] },
  ];
  for (let i = 1; i < times.length; i++) {
    const keyframe = times[i] - times[i - 1] > minimumSkip ? keyframeBefore(i) : null;
    if (keyframe !== null && keyframe - times[i - 1] > minimumSkip) {
      groups.push({ seekSeconds: times[i], times: [times[i]] });
    } else {
      groups[groups.length - 1].times.push(times[i]);
    }
  }
  return groups;
}
