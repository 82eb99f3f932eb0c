// The deck issue 38's slides mode is judged on (test/extractor/slides.test.ts,
// test/e2e/slides.test.ts): six slides in seven showings (the first is shown again as the
// fifth), 1280×720 at 25 fps, joined by 0.5 s cross-fades (xfade), a pointer (a small box)
// moving over two slides, each slide's title drawn large with Debian's DejaVu Sans Bold.
// Two pairs of slides share their brightness (CHARLIE and DELTA, ECHO and FOXTROT: in grey
// they differ only by the title), so `count` has a clear answer. Cached on disk by its spec.
import { makeLavfiClip } from "../extractor/helpers.ts";

export const DECK_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
export const FADE_SECONDS = 0.5;

export interface DeckSlide {
  title: string;
  /** Background, RGB. */
  rgb: [number, number, number];
  ink: "white" | "black";
  pointer: boolean;
}

export const SLIDES: DeckSlide[] = [
  { title: "ALPHA", rgb: [30, 40, 90], ink: "white", pointer: false },
  { title: "BRAVO", rgb: [230, 220, 170], ink: "black", pointer: true },
  { title: "CHARLIE", rgb: [150, 100, 60], ink: "white", pointer: false },
  { title: "DELTA", rgb: [80, 115, 140], ink: "white", pointer: false },
  { title: "ECHO", rgb: [200, 160, 120], ink: "black", pointer: false },
  { title: "FOXTROT", rgb: [150, 170, 200], ink: "black", pointer: true },
];

/** The showings in order: which slide, for how long its clip runs (fades included). */
export const SHOWINGS: { slide: number; seconds: number }[] = [
  { slide: 0, seconds: 5 },
  { slide: 1, seconds: 6 },
  { slide: 2, seconds: 4 },
  { slide: 3, seconds: 7 },
  { slide: 0, seconds: 3.5 },
  { slide: 4, seconds: 5 },
  { slide: 5, seconds: 8 },
];

export interface Showing {
  slide: number;
  /** When the picture is settled on the slide: after the fade in, before the fade out. */
  settledFrom: number;
  settledTo: number;
}

/** Where each showing is settled, from the clip lengths and the fades between them. */
export function showingTimes(): Showing[] {
  const out: Showing[] = [];
  let clipStart = 0;
  SHOWINGS.forEach((s, i) => {
    const fadeIn = i === 0 ? 0 : FADE_SECONDS;
    const fadeOut = i === SHOWINGS.length - 1 ? 0 : FADE_SECONDS;
    out.push({
      slide: s.slide,
      settledFrom: clipStart + fadeIn,
      settledTo: clipStart + s.seconds - fadeOut,
    });
    clipStart += s.seconds - FADE_SECONDS;
  });
  return out;
}

export const DECK_SECONDS =
  SHOWINGS.reduce((sum, s) => sum + s.seconds, 0) - FADE_SECONDS * (SHOWINGS.length - 1);

function hex([r, g, b]: [number, number, number]): string {
  return `0x${[r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("")}`;
}

function slideSource(slide: DeckSlide, seconds: number): string {
  const page =
    `color=c=${hex(slide.rgb)}:s=1280x720:r=25:d=${seconds},format=yuv420p,` +
    `drawtext=fontfile=${DECK_FONT}:text='${slide.title}':fontsize=130:fontcolor=${slide.ink}:` +
    "x=(w-text_w)/2:y=170";
  if (!slide.pointer) return page;
  // The pointer glides right and bobs, for the whole showing (fades included).
  return (
    `${page}[page];color=c=${slide.ink}:s=22x30:r=25:d=${seconds}[pointer];` +
    "[page][pointer]overlay=x='160+110*t':y='430+40*sin(2*t)':eof_action=pass[out0]"
  );
}

export function slideDeck(): Promise<string> {
  const inputs = SHOWINGS.map((s) => slideSource(SLIDES[s.slide], s.seconds));
  const fades: string[] = [];
  let offset = 0;
  let last = "[0]";
  SHOWINGS.slice(1).forEach((_, k) => {
    offset += SHOWINGS[k].seconds - FADE_SECONDS;
    const out = k === SHOWINGS.length - 2 ? "[faded]" : `[x${k + 1}]`;
    fades.push(
      `${last}[${k + 1}]xfade=transition=fade:duration=${FADE_SECONDS}:offset=${offset}${out}`,
    );
    last = out;
  });
  return makeLavfiClip("slide-deck", inputs, `${fades.join(";")};[faded]format=yuv420p[v]`, [
    ...["-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-pix_fmt", "yuv420p"],
  ]);
}
