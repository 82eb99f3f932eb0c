// How a job's wanted times are decoded: grouped into ffmpeg runs (seek points chosen by the
// cost model in strategy.ts and the keyframe index), started ahead so both cores work, and fed
// to the frame writer in order.
import type { PlannedFrame } from "../schema/frame-plan.ts";
import type { BatchGroup, DecodeContext, DecodedFrame, DecodeGroup } from "./decode.ts";
import { BatchRun, DecodeRun, decodeBatch, decodeGroup, largePicture, shortRun } from "./decode.ts";
import { formatSeconds } from "./ffmpeg/args.ts";
import type { KeyframeRow } from "./ffmpeg/mp4-index.ts";
import { probeKeyframesAt, probeKeyframesBefore } from "./ffmpeg/probe.ts";
import type { FrameWriter } from "./frame-writer.ts";
import { log } from "./log.ts";
import { PTS_TOLERANCE_SECONDS } from "./slots.ts";
import {
  decodeCostModel,
  keyframesWorthAsking,
  minimumSkipSeconds,
  planDecodeGroups,
  seekCandidates,
} from "./strategy.ts";

export interface DecodeSettings {
  /** "auto" weighs seeking against decoding; the others force one way (tests, the bench). */
  strategy: "auto" | "dense" | "sparse";
  /** ffmpeg runs started before the current one is done (default 1, 0 at 4K). */
  runsAhead?: number;
  /** Keyframes looked up alongside the probe (lookUpKeyframesEarly), if any. */
  keyframeHints?: KeyframeHints | null;
}

/**
 * Absolute time, as ffprobe was given it (formatSeconds: to the microsecond, as the plan's times
 * are too) → the keyframe row found at or before it, for the first video stream.
 */
export type KeyframeHints = Map<string, KeyframeRow | null>;

/** A keyframe before a seek point: seconds from the video's first frame, its packet's bytes. */
interface KnownKeyframe {
  seconds: number;
  bytes: number | null;
}

// Past this many exact times, an early lookup that may go unused is not worth its reads.
const MAX_EARLY_KEYFRAME_QUERIES = 64;

/**
 * Where the keyframes before exact timestamps lie, asked at the same time as the probe instead
 * of after it (the plan needs them before any decode starts; over the relay each ffprobe run
 * costs ~0.1 s of start-up and round trips). It asks the first video stream and takes the
 * times as absolute, so chooseGroups uses the answer only where the probe then picks that
 * stream and the video starts at 0; otherwise it asks again as before. Null when not worth it.
 */
export function lookUpKeyframesEarly(
  input: string,
  timestamps: number[] | null,
  strategy: DecodeSettings["strategy"],
  signal?: AbortSignal,
): Promise<KeyframeHints | null> {
  const times = [...new Set(timestamps ?? [])].sort((a, b) => a - b);
  const gapped = times.some((t, i) => i > 0 && t - times[i - 1] > 0.5);
  if (strategy === "dense" || times.length < 2 || !gapped) return Promise.resolve(null);
  if (times.length > MAX_EARLY_KEYFRAME_QUERIES) return Promise.resolve(null);
  return probeKeyframesAt(input, "v:0", times, signal).then(
    (rows) => new Map(times.map((t, i) => [formatSeconds(t), rows[i]])),
    // A failed lookup costs nothing but the plan's own lookup later.
    () => null,
  );
}

// Past this many seek points, asking where every keyframe is costs more than it can save.
const MAX_KEYFRAME_QUERIES = 1000;

// Short runs are batched into one ffmpeg (decode.ts BatchRun), which pays ffmpeg's start (~0.1 s
// of linking over 200 libraries) once for several seeks. A batch decodes its seeks one after
// another on one core, so consecutive batchable groups are split evenly into as many batches as
// decode side by side (decodeAll keeps one run ahead: two), of at most BATCH_GROUPS seeks: 12
// timestamps of a 5-minute 1080p file as two batches of six at once, where batches of four ran
// two at once and left one core idle for the third. A batch holds its decoded frames as it
// decodes them, so it takes few (8 × 6 MB at 1080p), and each input keeps its decoder's
// pictures to the end, so only up to 1440p. Its groups end well before the end of the video:
// a group that met the end would need to see it, which only a single run does.
const BATCH_GROUPS = 6;
const BATCH_FRAMES = 8;
const BATCH_END_MARGIN_SECONDS = 5;

type Unit = DecodeRun | BatchRun;

/** Consecutive batchable groups packed into batches; every other group stays one run. */
export function packBatches(
  groups: DecodeGroup[],
  batchable: (group: DecodeGroup) => group is BatchGroup,
  sideBySide = 2,
): DecodeGroup[][] {
  const units: DecodeGroup[][] = [];
  let stretch: BatchGroup[] = [];
  const closeStretch = () => {
    const batches = Math.max(
      Math.min(sideBySide, stretch.length),
      Math.ceil(stretch.length / BATCH_GROUPS),
    );
    // Cut where the running cost passes each batch's even share, so the batches side by side
    // end together (by count alone, 12 mid-GOP seeks of the bench split 6.5 : 8.3 s of decoding
    // and one core waited 0.2 s for the other).
    const share = stretch.reduce((sum, g) => sum + batchCost(g), 0) / Math.max(batches, 1);
    let batch: BatchGroup[] = [];
    let frames = 0;
    let before = 0;
    let closed = 0;
    for (const group of stretch) {
      const cost = batchCost(group);
      const full = batch.length >= BATCH_GROUPS || frames + group.times.length > BATCH_FRAMES;
      const pastShare = closed < batches - 1 && before + cost / 2 > share * (closed + 1);
      if (batch.length > 0 && (full || pastShare)) {
        units.push(batch);
        batch = [];
        frames = 0;
        closed++;
      }
      batch.push(group);
      frames += group.times.length;
      before += cost;
    }
    if (batch.length > 0) units.push(batch);
    stretch = [];
  };
  for (const group of groups) {
    if (!batchable(group) || group.times.length > BATCH_FRAMES) {
      closeStretch();
      units.push([group]);
      continue;
    }
    stretch.push(group);
  }
  closeStretch();
  return units;
}

/**
 * Batches that all run at once (no more than `sideBySide`), their groups dealt out again so the
 * batches end together: the longest group first, each to the batch with the least decoding so
 * far that still has room, and each batch's groups back in time order. Cut in time order, one
 * batch could hold most of the work (12 mid-GOP seeks of the bench: 10.1 against 11.9 s of
 * decoding, the first run's core left waiting 0.05-0.19 s for the second); dealt out, their
 * frames no longer come run after run, and decodeAll takes them from both in time order. Null
 * where the plan is anything else (a single run among them, more batches than run at once, or
 * groups that do not fit the batches' limits), which keeps its cut.
 */
export function dealtSideBySide(units: DecodeGroup[][], sideBySide: number): BatchGroup[][] | null {
  if (units.length < 2 || units.length > sideBySide) return null;
  if (units.some((unit) => unit.length < 2)) return null;
  const groups = (units.flat() as BatchGroup[]).sort((a, b) => batchCost(b) - batchCost(a));
  const dealt: DealtBatch[] = units.map(() => ({ groups: [], cost: 0, frames: 0 }));
  for (const group of groups) {
    const room = dealt.filter(
      (batch) =>
        batch.groups.length < BATCH_GROUPS && batch.frames + group.times.length <= BATCH_FRAMES,
    );
    if (room.length === 0) return null;
    const lightest = room.reduce((a, b) => (b.cost < a.cost ? b : a));
    lightest.groups.push(group);
    lightest.cost += batchCost(group);
    lightest.frames += group.times.length;
  }
  if (dealt.some((batch) => batch.groups.length < 2)) return null;
  // Then one group for another between two batches, while that brings them closer (the
  // longest-first deal leaves 0.25 s of decoding between bench-http's two; this, 0.05).
  for (let rounds = 0; rounds < 100 && swapCloser(dealt); rounds++);
  return dealt.map((batch) => batch.groups.sort((a, b) => a.times[0] - b.times[0]));
}

interface DealtBatch {
  groups: BatchGroup[];
  cost: number;
  frames: number;
}

/** Swaps one group of a costlier batch for one of a cheaper one, where that narrows their gap. */
function swapCloser(dealt: DealtBatch[]): boolean {
  for (const a of dealt) {
    for (const b of dealt) {
      const gap = a.cost - b.cost;
      if (gap <= 0) continue;
      for (const [i, x] of a.groups.entries()) {
        for (const [j, y] of b.groups.entries()) {
          const moved = batchCost(x) - batchCost(y);
          const shift = y.times.length - x.times.length;
          const fits = a.frames + shift <= BATCH_FRAMES && b.frames - shift <= BATCH_FRAMES;
          if (!fits || moved <= 0 || Math.abs(gap - 2 * moved) >= gap) continue;
          a.groups[i] = y;
          b.groups[j] = x;
          a.cost -= moved;
          b.cost += moved;
          a.frames += shift;
          b.frames -= shift;
          return true;
        }
      }
    }
  }
  return false;
}

/**
 * The frames of units running side by side, in time order whichever unit decodes each: every
 * unit's next frame is held until it is the earliest (a batch reads its pipe ahead, decode.ts,
 * so a unit never waits on the other). Each frame's slot is its index in `times`, all the
 * units' times in order.
 */
async function* inTimeOrder(
  context: DecodeContext,
  units: Unit[],
  times: number[],
): AsyncGenerator<DecodedFrame> {
  const slotOf = new Map(times.map((t, i) => [t, i]));
  const sources = units.map((unit) => ({ unit, frames: framesOf(context, unit) }));
  const heads = sources.map(({ frames }) => frames.next());
  for (const head of heads) head.catch(() => {});
  const held: (DecodedFrame | null)[] = [];
  try {
    for (;;) {
      const settled = await Promise.all(heads);
      held.length = 0;
      let earliest = -1;
      for (const [k, next] of settled.entries()) {
        held.push(next.done ? null : next.value);
        if (next.done) continue;
        const time = sources[k].unit.group.times[next.value.slot];
        const best = held[earliest];
        if (!best || time < sources[earliest].unit.group.times[best.slot]) earliest = k;
      }
      if (earliest < 0) return;
      const frame = held[earliest] as DecodedFrame;
      const time = sources[earliest].unit.group.times[frame.slot];
      held[earliest] = null;
      heads[earliest] = sources[earliest].frames.next();
      heads[earliest].catch(() => {});
      yield { ...frame, slot: slotOf.get(time) ?? frame.slot };
    }
  } finally {
    // Frames taken from a unit and not handed on go back to the pool (the units themselves
    // are stopped by decodeAll).
    for (const frame of held) frame?.release();
  }
}

// What one more input costs a batch besides its decoding (opening it, the moov, the seek), in
// seconds of video decoded (~30 ms against ~50 ms per second of 1080p30, measured).
const SEEK_COST_SECONDS = 0.6;

/** A batched group's work: the video decoded from its keyframe, plus opening its input. */
function batchCost(group: BatchGroup): number {
  return group.times[group.times.length - 1] - group.keyframeSeconds + SEEK_COST_SECONDS;
}

/** Short groups well before the end whose seek's keyframe is known (it bounds the read). */
function batchableIn(
  context: DecodeContext,
  keyframeOf: Map<number, KnownKeyframe>,
): (group: DecodeGroup) => group is BatchGroup {
  const { durationSeconds } = context.video;
  return (group): group is BatchGroup => {
    if (largePicture(context.video) || durationSeconds === null) return false;
    const keyframe = group.seekSeconds === null ? undefined : keyframeOf.get(group.seekSeconds);
    if (keyframe === undefined || !shortRun(group)) return false;
    (group as BatchGroup).keyframeSeconds = keyframe.seconds;
    (group as BatchGroup).keyframeBytes = keyframe.bytes;
    return group.times[group.times.length - 1] + BATCH_END_MARGIN_SECONDS < durationSeconds;
  };
}

function startUnit(context: DecodeContext, groups: DecodeGroup[], moreRuns: boolean): Unit {
  return groups.length > 1
    ? new BatchRun(context, groups as BatchGroup[])
    : new DecodeRun(context, groups[0], moreRuns);
}

function framesOf(context: DecodeContext, unit: Unit): AsyncGenerator<DecodedFrame> {
  return unit instanceof BatchRun ? decodeBatch(context, unit) : decodeGroup(context, unit);
}

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
  { strategy, runsAhead, keyframeHints }: DecodeSettings,
): Promise<void> {
  const timeOf = decodeTimeIn(context);
  const times = [...new Set(wanted.map((f) => timeOf(f.timestamp)))].sort((a, b) => a - b);
  const framesAt = new Map<number, PlannedFrame[]>();
  for (const frame of wanted) {
    const time = timeOf(frame.timestamp);
    framesAt.set(time, [...(framesAt.get(time) ?? []), frame]);
  }
  const {
    groups: chosen,
    keyframeOf,
    keyframesFrom,
  } = await chooseGroups(context, times, strategy, keyframeHints ?? null);
  // At 4K a decoder alone holds ~190 MB (measured): run them one at a time to bound memory.
  const ahead = runsAhead ?? (largePicture(context.video) ? 0 : 1);
  const packed = packBatches(chosen, batchableIn(context, keyframeOf), ahead + 1);
  const dealt = dealtSideBySide(packed, ahead + 1);
  const groups: DecodeGroup[][] = dealt ?? packed;
  log("debug", "decode plan", {
    times: times.length,
    runs: groups.length,
    keyframes_from: keyframesFrom,
    ...(dealt ? { dealt: true } : {}),
  });
  const started: Unit[] = [];
  let nextGroup = 0;
  try {
    if (dealt) {
      for (const batch of dealt) started.push(startUnit(context, batch, true));
      const all = [...new Set(started.flatMap((unit) => unit.group.times))].sort((a, b) => a - b);
      await writer.writeAll(inTimeOrder(context, started, all), (frame: DecodedFrame) => {
        return framesAt.get(all[frame.slot]) ?? [];
      });
      started.length = 0;
      return;
    }
    for (;;) {
      while (nextGroup < groups.length && started.length <= ahead) {
        started.push(startUnit(context, groups[nextGroup++], groups.length > 1));
      }
      const run = started[0];
      if (!run) break;
      await writer.writeAll(framesOf(context, run), (frame: DecodedFrame) => {
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

/**
 * The time a run decodes for a wanted time. ffmpeg's end of stream (the video's end) counts a
 * wanted time only when it lies more than PTS_TOLERANCE_SECONDS before it, so a time in the
 * video's last microsecond got no frame; it is decoded 2 µs before the end instead, where the
 * same frame is on screen (no frame lasts 2 µs). Every other time is its own.
 */
function decodeTimeIn(context: DecodeContext): (time: number) => number {
  const last = context.durationSeconds - 2 * PTS_TOLERANCE_SECONDS;
  return (time) => Math.min(time, last);
}

async function chooseGroups(
  context: DecodeContext,
  times: number[],
  strategy: DecodeSettings["strategy"],
  hints: KeyframeHints | null,
) {
  // Keyframes known at seek points (seek seconds → keyframe): they bound batch reads.
  const keyframeOf = new Map<number, KnownKeyframe>();
  if (strategy === "dense") {
    return { groups: [{ seekSeconds: null, times }], keyframeOf, keyframesFrom: null };
  }
  const model = decodeCostModel(context.video);
  const minimumSkip = strategy === "sparse" ? 0 : minimumSkipSeconds(model);
  const later = seekCandidates(times, minimumSkip);
  // The first time's keyframe too, when the first run seeks and others might: it lets that run
  // join a batch (the plan itself never needs it).
  const candidates = later.length > 0 && times[0] > minimumSkip ? [0, ...later] : later;
  const keyframes = new Map<number, KnownKeyframe | null>();
  let keyframesFrom: "early lookup" | "probe" | null = null;
  if (candidates.length > 0 && candidates.length <= MAX_KEYFRAME_QUERIES) {
    const start = context.video.startTime;
    const absolute = candidates.map((i) => start + times[i]);
    const early = hinted(hints, absolute, context.video.streamIndex);
    // Asking costs a run of its own; "sparse" always asks (it is told to seek).
    const worthAsking =
      strategy === "sparse" || keyframesWorthAsking(times, later, minimumSkip, model);
    if (early || worthAsking) {
      keyframesFrom = early ? "early lookup" : "probe";
      const found =
        early ??
        (await probeKeyframesBefore(context.input, context.video, absolute, context.signal));
      candidates.forEach((i, n) => {
        const row = found[n];
        keyframes.set(i, row ? { seconds: row.keyframe - start, bytes: row.bytes } : null);
      });
    }
  }
  for (const [i, keyframe] of keyframes) if (keyframe !== null) keyframeOf.set(times[i], keyframe);
  return {
    groups: planDecodeGroups(times, (i) => keyframes.get(i)?.seconds ?? null, minimumSkip),
    keyframeOf,
    keyframesFrom,
  };
}

/** The early lookup's keyframes for these absolute times, if it has every one for this stream. */
function hinted(
  hints: KeyframeHints | null,
  absolute: number[],
  streamIndex: number,
): KeyframeRow[] | null {
  if (!hints) return null;
  const keyframes: KeyframeRow[] = [];
  for (const t of absolute) {
    const row = hints.get(formatSeconds(t));
    if (!row || row.streamIndex !== streamIndex) return null;
    keyframes.push(row);
  }
  return keyframes;
}
