// Which candidates of the cheap pass (best-candidates.ts) `mode: "best"` delivers. Pure.
//
// Shots: a candidate starts a new shot when ffmpeg's scene score reached the scenes mode's
// default cut threshold (scenes.ts: 0.275) anywhere between it and the previous candidate.
// Winners, best score first (earlier first at equal scores):
// 1. the best candidate of each shot, never two from one shot, until `count` are chosen;
// 2. when the range has fewer shots than `count`, the best of the rest, each at least
//    minGapSeconds from every winner: span / (2·count), between the candidate step and 2 s.
// So `count` is an upper bound: a short one-shot clip may give fewer frames than asked.
import type { Candidate } from "./best-candidates.ts";
import { sceneThreshold } from "./scenes.ts";

export const MOST_GAP_SECONDS = 2;

export interface Winner extends Candidate {
  shot: number;
}

export function numberShots(candidates: Candidate[]): Winner[] {
  const threshold = sceneThreshold();
  let shot = 0;
  return [...candidates]
    .sort((a, b) => a.time - b.time)
    .map((c, k) => {
      if (k > 0 && c.cutBefore >= threshold) shot++;
      return { ...c, shot };
    });
}

export function minGapSeconds(spanSeconds: number, count: number, step: number): number {
  return Math.max(step, Math.min(MOST_GAP_SECONDS, spanSeconds / (2 * Math.max(1, count))));
}

export function pickWinners(candidates: Candidate[], count: number, minGap: number): Winner[] {
  const ranked = numberShots(candidates).sort((a, b) => b.score - a.score || a.time - b.time);
  const winners: Winner[] = [];
  const farFromWinners = (c: Winner) => winners.every((w) => Math.abs(w.time - c.time) >= minGap);
  for (const c of ranked) {
    if (winners.length >= count) break;
    if (winners.some((w) => w.shot === c.shot) || !farFromWinners(c)) continue;
    winners.push(c);
  }
  for (const c of ranked) {
    if (winners.length >= count) break;
    if (winners.includes(c) || !farFromWinners(c)) continue;
    winners.push(c);
  }
  return winners.sort((a, b) => b.score - a.score || a.time - b.time);
}

/** The best candidate and where its shot starts (a preview without a start begins there). */
export function bestMomentOf(candidates: Candidate[]): { time: number; shotStart: number } | null {
  const shots = numberShots(candidates);
  const best = [...shots].sort((a, b) => b.score - a.score || a.time - b.time)[0];
  if (!best) return null;
  const shotStart = Math.min(...shots.filter((c) => c.shot === best.shot).map((c) => c.time));
  return { time: best.time, shotStart };
}
