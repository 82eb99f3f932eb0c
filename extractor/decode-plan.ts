// How a job's wanted times are decoded: grouped into ffmpeg runs (seek points chosen by the
// cost model in strategy.ts and the keyframe index), started ahead so both cores work, and fed
// to the frame writer in order.
import type { PlannedFrame } from "../schema/frame-plan.ts";
import type { DecodeContext, DecodedFrame } from "./decode.ts";
import { DecodeRun, decodeGroup } from "./decode.ts";
import { probeKeyframesBefore } from "./ffmpeg/probe.ts";
import type { FrameWriter } from "./frame-writer.ts";
import { log } from "./log.ts";
import {
  decodeCostModel,
  minimumSkipSeconds,
  planDecodeGroups,
  seekCandidates,
} from "./strategy.ts";

export interface DecodeSettings {
  /** "auto" weighs seeking against decoding; the others force one way (tests, the bench). */
  strategy: "auto" | "dense" | "sparse";
  /** ffmpeg runs started before the current one is done (default 1, 0 at 4K). */
  runsAhead?: number;
}

// Past this many seek points, asking where every keyframe is costs more than it can save.
const MAX_KEYFRAME_QUERIES = 1000;

/**
 * Decodes every group in order. The next groups' ffmpeg runs start while the current one is
 * read: a short sparse run is mostly process start-up and seeking, which overlap well; the
 * waiting run holds at most a frame in its pipe. One ahead keeps two cores busy (measured: more
 * runs at once only contend).
 */
export async function decodeAll(
  context: DecodeContext,
  wanted: PlannedFrame[],
  writer: FrameWriter,
  { strategy, runsAhead }: DecodeSettings,
): Promise<void> {
  const times = [...new Set(wanted.map((f) => f.timestamp))].sort((a, b) => a - b);
  const framesAt = new Map<number, PlannedFrame[]>();
  for (const frame of wanted) {
    framesAt.set(frame.timestamp, [...(framesAt.get(frame.timestamp) ?? []), frame]);
  }
  const groups = await chooseGroups(context, times, strategy);
  log("debug", "decode plan", { times: times.length, groups: groups.length });
  // At 4K a decoder alone holds ~190 MB (measured): run them one at a time to bound memory.
  const { width, height } = context.video;
  const ahead = runsAhead ?? (width * height > 2560 * 1440 ? 0 : 1);
  const started: DecodeRun[] = [];
  let nextGroup = 0;
  try {
    for (;;) {
      while (nextGroup < groups.length && started.length <= ahead) {
        started.push(new DecodeRun(context, groups[nextGroup++]));
      }
      const run = started[0];
      if (!run) break;
      await writer.writeAll(decodeGroup(context, run), (frame: DecodedFrame) => {
        return framesAt.get(run.group.times[frame.slot]) ?? [];
      });
      started.shift();
      log("debug", "decode group done", {
        seek: run.group.seekSeconds,
        frames: run.group.times.length,
      });
    }
  } finally {
    for (const run of started) run.cancel();
  }
}

async function chooseGroups(
  context: DecodeContext,
  times: number[],
  strategy: DecodeSettings["strategy"],
) {
  if (strategy === "dense") return [{ seekSeconds: null, times }];
  const minimumSkip =
    strategy === "sparse" ? 0 : minimumSkipSeconds(decodeCostModel(context.video));
  const candidates = seekCandidates(times, minimumSkip);
  const keyframes = new Map<number, number | null>();
  if (candidates.length > 0 && candidates.length <= MAX_KEYFRAME_QUERIES) {
    const start = context.video.startTime;
    const found = await probeKeyframesBefore(
      context.input,
      context.video,
      candidates.map((i) => start + times[i]),
      context.signal,
    );
    candidates.forEach((i, n) => {
      keyframes.set(i, found[n] === null ? null : found[n] - start);
    });
  }
  return planDecodeGroups(times, (i) => keyframes.get(i) ?? null, minimumSkip);
}
