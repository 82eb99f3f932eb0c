// The delivered picture size: `resolution` is the short side (1080 → 1920×1080 landscape,
// 1080×1920 portrait), never upscaled; a smaller source gets the largest standard size it
// reaches (or its own size below the smallest) and a note saying so; `max_width` then only
// shrinks. Pure, so the edge could show it too.

import type { Resolution } from "../schema/plans.ts";
import { RESOLUTIONS } from "../schema/plans.ts";

export interface OutputSize {
  width: number;
  height: number;
  /** Short side of the delivered frames. */
  deliveredResolution: number;
  /** Why the delivered resolution is lower than asked for, when it is. */
  note: string | null;
}

export function planOutputSize(
  display: { width: number; height: number },
  requested: Resolution,
  maxWidth?: number,
): OutputSize {
  const shortSide = Math.min(display.width, display.height);
  const reachable = RESOLUTIONS.filter((r) => r <= shortSide);
  const target =
    shortSide >= requested ? requested : (reachable[reachable.length - 1] ?? shortSide);
  let scale = target / shortSide;
  if (maxWidth !== undefined && display.width * scale > maxWidth) scale = maxWidth / display.width;
  const width = Math.max(1, Math.round(display.width * scale));
  const height = Math.max(1, Math.round(display.height * scale));
  const deliveredResolution = Math.min(width, height);
  let note: string | null = null;
  if (target < requested) {
    note =
      reachable.length > 0
        ? `The video is ${shortSide}p, below the requested ${requested}p; frames are delivered ` +
          `at ${target}p because they are never upscaled.`
        : `The video is only ${display.width}×${display.height}, below the smallest standard ` +
          `size (240p); frames are delivered at its own size because they are never upscaled.`;
  }
  return { width, height, deliveredResolution, note };
}
