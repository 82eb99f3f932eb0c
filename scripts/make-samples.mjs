// Makes the sample videos the edge serves at /samples/* (schema/samples.ts) with ffmpeg's own
// test sources, and writes them to edge/samples/, where they are committed and bundled
// (docs/decisions/0130). Run it again only to change a sample:
//   node scripts/make-samples.mjs
// intro.mp4: 30 s of 1280×720 H.264 at 25 fps with mono AAC, five scenes of 6 s (a colour, a
// title naming a mode, a line under it), a knob that moves along a track and a clock of the
// presentation time, so every frame shows when it was taken; a keyframe every 2 s and none at
// the cuts, so keyframes and scenes modes give different frames.
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const OUT = join(ROOT, "edge", "samples", "intro.mp4");
const FONTS = "/usr/share/fonts/truetype/dejavu";
const BOLD = `${FONTS}/DejaVuSans-Bold.ttf`;
const REGULAR = `${FONTS}/DejaVuSans.ttf`;
const MONO = `${FONTS}/DejaVuSansMono.ttf`;

// Background and text colour of each scene: dark and light in turn, so a cut changes the
// brightness as well as the colour (scene detection reads mostly the luma).
const SCENES = [
  ["0x0b1d51", "white", "Stills", "A 30-second sample the service serves itself"],
  ["0xf2c94c", "0x1a1a1a", "Count", "N frames evenly spaced"],
  ["0x064e3b", "white", "Interval", "A frame every N seconds"],
  ["0xe5e7eb", "0x1a1a1a", "Scenes", "A frame at every cut"],
  ["0x7f1d1d", "white", "Keyframes", "The pictures the encoder keeps whole"],
];
const SCENE_SECONDS = 6;
const SECONDS = SCENES.length * SCENE_SECONDS;

const graph = [
  // The knob: white with a black rim, seen on every background.
  `color=c=black:s=28x28:r=25:d=${SECONDS},drawbox=x=4:y=4:w=20:h=20:color=white:t=fill[knob]`,
  ...SCENES.map(
    ([background, ink, title, line], i) =>
      `color=c=${background}:s=1280x720:r=25:d=${SCENE_SECONDS},format=yuv420p,` +
      `drawbox=x=80:y=526:w=1120:h=12:color=${ink}@0.35:t=fill,` +
      `drawtext=fontfile=${BOLD}:text='Scene ${i + 1} of ${SCENES.length}':fontsize=44:fontcolor=${ink}@0.85:x=80:y=120,` +
      `drawtext=fontfile=${BOLD}:text='${title}':fontsize=120:fontcolor=${ink}:x=80:y=190,` +
      `drawtext=fontfile=${REGULAR}:text='${line}':fontsize=48:fontcolor=${ink}@0.9:x=80:y=350,` +
      `drawtext=fontfile=${BOLD}:text='Stills sample video':fontsize=32:fontcolor=${ink}@0.8:x=w-tw-80:y=h-th-60[v${i}]`,
  ),
  `${SCENES.map((_, i) => `[v${i}]`).join("")}concat=n=${SCENES.length}:v=1:a=0[bg]`,
  `[bg][knob]overlay=x='78+1096*t/${SECONDS}':y=518,` +
    `drawtext=fontfile=${MONO}:text='%{pts\\:hms}':fontsize=56:fontcolor=white:box=1:boxcolor=black@0.6:boxborderw=10:x=80:y=590[v]`,
].join(";");

const args = [
  "-y",
  "-hide_banner",
  "-loglevel",
  "error",
  "-filter_complex",
  graph,
  "-f",
  "lavfi",
  "-i",
  `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
  "-map",
  "[v]",
  "-map",
  "0:a",
  "-c:v",
  "libx264",
  "-preset",
  "veryslow",
  "-crf",
  "30",
  "-g",
  "50",
  "-keyint_min",
  "50",
  "-sc_threshold",
  "0",
  "-pix_fmt",
  "yuv420p",
  "-c:a",
  "aac",
  "-b:a",
  "48k",
  "-ac",
  "1",
  "-movflags",
  "+faststart",
  "-map_metadata",
  "-1",
  "-t",
  String(SECONDS),
  OUT,
];

const run = spawnSync(process.env.FFMPEG_PATH ?? "ffmpeg", args, { stdio: "inherit" });
if (run.status !== 0) process.exit(run.status ?? 1);
console.log(`${OUT}: ${statSync(OUT).size} bytes`);
