// Which frames of a scene pass start a shot. Pure, so the rule is tested as data.
//
// sensitivity s (0…1, default 0.5) maps linearly to a threshold on ffmpeg's scene score:
// threshold = 0.5 − 0.45·s (s = 0 → 0.5, only the starkest cuts; 0.5 → 0.275; 1 → 0.05,
// nearly any change). Measured on generated clips: hard cuts between different pictures
// score 0.45–0.9, motion and noise within a shot stay below 0.05, and a fade moves the
// score by a few hundredths a frame, so it is never a cut by itself.
import type { SceneSample } from "../ffmpeg/keyframes.ts";

export const DEFAULT_SENSITIVITY = 0.5;

/** A cut this soon after the previous one is the same change (a flash, a glitch). */
export const MIN_SHOT_SECONDS = 0.2;

export function sceneThreshold(sensitivity = DEFAULT_SENSITIVITY): number {
  const s = Math.min(1, Math.max(0, sensitivity));
  return 0.5 - 0.45 * s;
}

export interface SceneCut {
  /** The first frame of the shot, seconds from the video's first frame. */
  time: number;
  /** Its scene score; the opening shot has no previous picture and reports 1. */
  score: number;
}

export interface SceneChoice {
  sensitivity?: number;
  /** Upper bound on the frames: the opening plus the strongest count − 1 cuts. */
  count?: number;
  rangeStart: number;
  rangeEnd: number;
}

export function pickSceneCuts(samples: SceneSample[], choice: SceneChoice): SceneCut[] {
  const inRange = samples.filter((s) => s.time >= choice.rangeStart && s.time < choice.rangeEnd);
  const opening = inRange[0];
  if (!opening) return [];
  const threshold = sceneThreshold(choice.sensitivity);
  const cuts: SceneCut[] = [];
  let last = opening.time;
  for (const sample of inRange.slice(1)) {
    if (sample.score < threshold || sample.time - last < MIN_SHOT_SECONDS) continue;
    cuts.push({ time: sample.time, score: sample.score });
    last = sample.time;
  }
  const most = choice.count === undefined ? cuts.length : Math.max(0, choice.count - 1);
  const kept = [...cuts]
    .sort((a, b) => b.score - a.score || a.time - b.time)
    .slice(0, most)
    .sort((a, b) => a.time - b.time);
  return [{ time: opening.time, score: 1 }, ...kept];
}

/** count keyframes spread evenly over the list: the i-th of n at ⌊(i + ½)·len/n⌋. */
export function spreadEvenly<T>(items: T[], count: number | undefined): T[] {
  if (count === undefined || count >= items.length) return items;
  return Array.from(
    { length: count },
    (_, i) => items[Math.floor(((i + 0.5) * items.length) / count)],
  );
}
