// Small test videos made with ffmpeg's lavfi sources, cached per shape for the test run.
// The "brightness" video encodes time in its pixels (luma = 20 × whole seconds), so a test can
// tell from one decoded frame which moment of the video it came from. Temporal noise keeps the
// files realistically large, so reading only part of one is measurable.
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { cacheTmpdir } from "../../../scripts/lib/cache-tmpdir.mjs";

const run = promisify(execFile);
const CACHE = join(cacheTmpdir(), "stills-sources-test-videos-v5");

export interface VideoShape {
  seconds: number;
  width: number;
  height: number;
  /** moov atom first (true) or at the end, as cameras write it (false). */
  faststart: boolean;
  container?: "mp4" | "webm";
}

export async function brightnessVideo(shape: VideoShape): Promise<string> {
  const container = shape.container ?? "mp4";
  const name = `b-${shape.seconds}s-${shape.width}x${shape.height}-${shape.faststart ? "fs" : "end"}.${container}`;
  const path = join(CACHE, name);
  if (existsSync(path)) return path;
  await mkdir(CACHE, { recursive: true });
  const source = `color=c=black:s=${shape.width}x${shape.height}:r=10:d=${shape.seconds},geq=lum='mod(floor(T)*20\\,240)':cb=128:cr=128,noise=alls=10:allf=t`;
  const codec =
    container === "webm"
      ? ["-c:v", "libvpx", "-b:v", "200k", "-deadline", "realtime"]
      : [
          "-c:v",
          "libx264",
          "-preset",
          "ultrafast",
          "-g",
          "10",
          "-crf",
          "28",
          "-pix_fmt",
          "yuv420p",
        ];
  const layout = container === "mp4" && shape.faststart ? ["-movflags", "+faststart"] : [];
  await run("ffmpeg", [
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    source,
    ...codec,
    ...layout,
    path,
  ]);
  return path;
}

/**
 * The gray picture ffmpeg shows at each of `times` (an accurate seek each), read with
 * `inputArgs`: one ffmpeg run with an input and an output per time, each output on a pipe of its
 * own (fd 3, 4, …). The same seek and conversion as one run per time, for one process start.
 */
export async function picturesAt(inputArgs: string[], times: number[]): Promise<Buffer[]> {
  if (times.length === 0) return [];
  const args = ["-v", "error", "-nostdin"];
  for (const seconds of times) args.push("-ss", String(seconds), ...inputArgs);
  times.forEach((_, i) => {
    args.push("-map", `${i}:v:0`, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray");
    args.push(`pipe:${3 + i}`);
  });
  const child = spawn("ffmpeg", args, {
    stdio: ["ignore", "ignore", "pipe", ...times.map(() => "pipe" as const)],
  });
  const read = (stream: NodeJS.ReadableStream | null) =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      stream?.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream?.on("error", reject);
      stream?.on("end", () => resolve(Buffer.concat(chunks)));
    });
  // Read together and settled together: a stream's error never goes unhandled.
  const [code, errors, ...pictures] = await Promise.all([
    new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    }),
    read(child.stderr),
    ...times.map((_, i) => read(child.stdio[3 + i] as NodeJS.ReadableStream)),
  ]);
  if (code !== 0) throw new Error(`ffmpeg exited ${code}: ${String(errors).trim()}`);
  return pictures as Buffer[];
}

/** picturesAt for one time. */
export async function pictureAt(inputArgs: string[], seconds: number): Promise<Buffer> {
  const [picture] = await picturesAt(inputArgs, [seconds]);
  return picture;
}

/** Mean luma (as encoded, 16–235 range) of the frame at `seconds` of `input` (file or URL). */
export async function meanLumaAt(input: string, seconds: number): Promise<number> {
  const { stdout } = await run(
    "ffmpeg",
    [
      "-v",
      "error",
      "-ss",
      String(seconds),
      "-i",
      input,
      "-frames:v",
      "1",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "gray",
      "-",
    ],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  );
  const pixels = stdout as Buffer;
  if (pixels.length === 0) throw new Error(`ffmpeg decoded nothing at ${seconds}s of ${input}`);
  let sum = 0;
  for (const value of pixels) sum += value;
  // ffmpeg's gray output is full range; undo that to compare with the encoded values.
  return ((sum / pixels.length) * 219) / 255 + 16;
}
