// The clip issue 39's best mode is judged on (test/extractor/best.test.ts, test/e2e/best.test.ts):
// six 2 s stretches of 640×360 at 25 fps, each a different flaw but one, H.264 in MP4.
import { makeLavfiClip } from "../extractor/helpers.ts";

const STRETCH = "s=640x360:r=25:d=2";
export const STRETCH_SECONDS = 2;

/** Which flaw each 2 s stretch has, in order; the fifth (8–10 s) is the crisp one. */
export const QUALITY_STRETCHES = [
  "blurred",
  "over-exposed",
  "under-exposed",
  "flat grey",
  "crisp",
  "low contrast",
] as const;

/** The stretch a moment falls in. */
export function stretchAt(seconds: number): (typeof QUALITY_STRETCHES)[number] {
  return QUALITY_STRETCHES[Math.floor(seconds / STRETCH_SECONDS)];
}

export function qualityClip(): Promise<string> {
  return makeLavfiClip(
    "quality-stretches",
    [
      `testsrc2=${STRETCH},boxblur=6`,
      `testsrc2=${STRETCH},eq=brightness=0.6:saturation=0.35`,
      `testsrc2=${STRETCH},format=rgb24,lutrgb=r=val/6:g=val/6:b=val/6`,
      `color=c=gray:${STRETCH}`,
      `testsrc2=${STRETCH}`,
      `testsrc2=${STRETCH},format=rgb24,lutrgb=r=100+val/6:g=100+val/6:b=100+val/6`,
    ],
    "[0][1][2][3][4][5]concat=n=6:v=1,format=yuv420p[v]",
  );
}
