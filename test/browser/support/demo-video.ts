// A video worth looking at in the landing page's screenshots: ffmpeg's testsrc2 (colour bars, a
// moving gradient) prints its own clock and frame number in the corner, so a person reading a
// screenshot can check each frame's caption against the time shown in the picture.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { cacheTmpdir } from "../../../scripts/lib/cache-tmpdir.mjs";

const run = promisify(execFile);

export const DEMO_VIDEO = { width: 1280, height: 720, fps: 30, durationSeconds: 12 };

/** Makes (once, cached in the temp directory) a 12 s 1280×720 H.264 MP4 and returns its path. */
export async function makeDemoVideo(): Promise<string> {
  const { width, height, fps, durationSeconds } = DEMO_VIDEO;
  const dir = join(cacheTmpdir(), "stills-browser-videos");
  const file = join(dir, `testsrc2-${width}x${height}-${fps}-${durationSeconds}s.mp4`);
  if (existsSync(file)) return file;
  await mkdir(dir, { recursive: true });
  const partial = `${file}.${process.pid}.part.mp4`;
  await run("ffmpeg", [
    ...["-v", "error", "-y", "-f", "lavfi"],
    ...["-i", `testsrc2=size=${width}x${height}:rate=${fps}:duration=${durationSeconds}`],
    ...["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", String(fps)],
    ...["-movflags", "+faststart", partial],
  ]);
  await rename(partial, file);
  return file;
}
