// Range-read benchmark: how much of a long video does a job that wants six frames download?
// A generated ten-minute 1080p H.264 file (cached in bench/out/) is served by a local server that
// honours Range; six frames are taken through openSource's relay with one `ffmpeg -ss T` each.
// Prints origin bytes ÷ file size for the moov-first and the moov-at-end layouts. Goal: < 0.25.
//   node scripts/bench-range.mjs [--minutes 10]
import { execFile } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, rename, stat } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { safeInputArgs } from "../extractor/ffmpeg/args.ts";
import { openSource } from "../extractor/sources/index.ts";

const run = promisify(execFile);
const minutes = Number(process.argv[process.argv.indexOf("--minutes") + 1]) || 10;
const seconds = minutes * 60;
const outDir = join(import.meta.dirname, "..", "bench", "out");
const FRAMES = 6;

async function generate() {
  await mkdir(outDir, { recursive: true });
  const moovEnd = join(outDir, `range-${minutes}min-1080p-moov-end.mp4`);
  const faststart = join(outDir, `range-${minutes}min-1080p-faststart.mp4`);
  if (!existsSync(moovEnd)) {
    console.log(
      `generating ${moovEnd} (${minutes} min 1080p, ~3 Mbit/s CBR; takes a few minutes)…`,
    );
    const partial = `${moovEnd}.part.mp4`;
    await run(
      "ffmpeg",
      [
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        `testsrc2=size=1920x1080:rate=25:duration=${seconds}`,
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-g",
        "50",
        "-pix_fmt",
        "yuv420p",
        // CBR with filler keeps the byte count realistic for a 1080p upload (testsrc2 alone
        // compresses to almost nothing).
        "-b:v",
        "3M",
        "-minrate",
        "3M",
        "-maxrate",
        "3M",
        "-bufsize",
        "3M",
        "-x264-params",
        "nal-hrd=cbr:force-cfr=1",
        partial,
      ],
      { maxBuffer: 1 << 20 },
    );
    await rename(partial, moovEnd);
  }
  if (!existsSync(faststart)) {
    await run("ffmpeg", [
      "-v",
      "error",
      "-y",
      "-i",
      moovEnd,
      "-c",
      "copy",
      "-movflags",
      "+faststart",
      `${faststart}.part.mp4`,
    ]);
    await rename(`${faststart}.part.mp4`, faststart);
  }
  return { faststart, moovEnd };
}

/** A minimal Range-capable file server that counts the body bytes it actually sends. */
async function serve(path) {
  const { size } = await stat(path);
  let sent = 0;
  const server = http.createServer((request, response) => {
    const match = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? "");
    const start = match ? Number(match[1]) : 0;
    const end = match?.[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
    response.writeHead(match ? 206 : 200, {
      "content-type": "video/mp4",
      "accept-ranges": "bytes",
      "content-length": end - start + 1,
      ...(match ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    });
    const stream = createReadStream(path, { start, end });
    stream.on("data", (chunk) => (sent += chunk.length));
    stream.pipe(response);
    response.on("close", () => stream.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/video.mp4`,
    size,
    sent: () => sent,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

async function measure(label, path) {
  const origin = await serve(path);
  const started = performance.now();
  const source = await openSource(origin.url, "direct", {
    resolution: 1080,
    allowPrivate: true,
    maxBytes: 4 * 1024 ** 3,
    deadlineMs: 10 * 60_000,
  });
  try {
    for (let i = 0; i < FRAMES; i += 1) {
      const t = ((i + 0.5) * seconds) / FRAMES;
      await run("ffmpeg", [
        "-v",
        "error",
        "-ss",
        String(t),
        // The extractor's own input flags: its runs ask the relay for parts (sources/relay.ts).
        ...safeInputArgs(source.input),
        "-frames:v",
        "1",
        "-f",
        "image2",
        "-c:v",
        "mjpeg",
        "-y",
        join(outDir, `frame-${i}.jpg`),
      ]);
    }
  } finally {
    await source.close();
    await origin.close();
  }
  const ms = performance.now() - started;
  const ratio = source.bytesRead() / origin.size;
  const mb = (n) => (n / 1024 ** 2).toFixed(1);
  console.log(
    `${label.padEnd(10)} file ${mb(origin.size)} MiB, read ${mb(source.bytesRead())} MiB ` +
      `(server sent ${mb(origin.sent())} MiB) → ratio ${ratio.toFixed(3)} ` +
      `${ratio < 0.25 ? "OK" : "OVER GOAL"}, ${(ms / 1000).toFixed(1)} s for ${FRAMES} frames`,
  );
  return ratio;
}

const { faststart, moovEnd } = await generate();
const ratios = [await measure("faststart", faststart), await measure("moov-end", moovEnd)];
process.exitCode = ratios.every((r) => r < 0.25) ? 0 : 1;
