// The cheap pass of `mode: "slides"`: one ffmpeg run over the range keeps one picture every
// SAMPLE_STEP seconds (each a frame's own pts), scaled into a SCAN_BOX px box in grey, and each
// is reduced to its grid of cell means as it arrives (slides.ts judges the grids). Only the
// chosen settled moments are then decoded at full size, by the sparse engine, exactly.
import type { VideoProbe } from "../ffmpeg/probe.ts";
import { failedRun, startTool } from "../ffmpeg/process.ts";
import { relativeSeconds, SHOWINFO_FRAME, scanPassArgs } from "./scan-pass.ts";
import type { SlideGrid, SlideSample } from "./slides.ts";
import { CELL_PIXELS } from "./slides.ts";

/** Seconds between samples: 4 a second, so a 0.5 s fade is seen in at least one sample. */
export const SAMPLE_STEP = 0.25;
/** At most this many samples (about 83 minutes at 4 a second); longer spans sample sparser. */
export const MOST_SAMPLES = 20_000;
/** The grey picture fits in this square (px), as best mode's scoring box. */
export const SCAN_BOX = 256;

export interface SlidesPass {
  input: string;
  streamIndex: number;
  seekSeconds: number;
  spanSeconds: number;
  step: number;
  width: number;
  height: number;
  grid: SlideGrid;
}

export function planSlidesPass(
  input: string,
  video: Pick<VideoProbe, "streamIndex" | "startTime" | "width" | "height">,
  range: { start: number; end: number },
): SlidesPass {
  const spanSeconds = Math.max(0, range.end - range.start);
  const scale = Math.min(1, SCAN_BOX / Math.max(video.width, video.height, 1));
  // Whole cells: the picture is a multiple of CELL_PIXELS on each side (at least one cell).
  const cells = (x: number) => Math.max(1, Math.round((x * scale) / CELL_PIXELS));
  const columns = cells(video.width);
  const rows = cells(video.height);
  return {
    input,
    streamIndex: video.streamIndex,
    seekSeconds: range.start + video.startTime,
    spanSeconds,
    step: Math.max(SAMPLE_STEP, spanSeconds / MOST_SAMPLES),
    width: columns * CELL_PIXELS,
    height: rows * CELL_PIXELS,
    grid: { columns, rows },
  };
}

export function slidesPassArgs(pass: SlidesPass): string[] {
  return scanPassArgs(pass, {
    filters: [
      // Pick first, so only the kept pictures are scaled.
      `select='isnan(prev_selected_t)+gte(t-prev_selected_t\\,${pass.step.toFixed(6)})'`,
      `scale=${pass.width}:${pass.height}:flags=area`,
      "showinfo=checksum=0",
      "format=gray",
    ],
    pixelFormat: "gray",
  });
}

const FILTER_LINE = /^\[Parsed_showinfo_\d+ @/;

/** Mean grey of each CELL_PIXELS square, row by row. */
export function cellMeans(pixels: Uint8Array, width: number, grid: SlideGrid): Uint8Array {
  const { columns, rows } = grid;
  const sums = new Uint32Array(columns * rows);
  for (let y = 0; y < rows * CELL_PIXELS; y++) {
    const row = Math.floor(y / CELL_PIXELS) * columns;
    const offset = y * width;
    for (let x = 0; x < columns * CELL_PIXELS; x++) {
      sums[row + Math.floor(x / CELL_PIXELS)] += pixels[offset + x];
    }
  }
  const area = CELL_PIXELS * CELL_PIXELS;
  return Uint8Array.from(sums, (sum) => Math.round(sum / area));
}

/** Runs the pass: every sample's time and cell grid. */
export async function scanSlideSamples(
  pass: SlidesPass,
  video: Pick<VideoProbe, "timeBase" | "startTime">,
  signal?: AbortSignal,
): Promise<SlideSample[]> {
  if (!(pass.spanSeconds > 0)) return [];
  const ticks: number[] = [];
  const running = startTool("ffmpeg", slidesPassArgs(pass), {
    signal,
    onStderrLine: (line) => {
      const shown = SHOWINFO_FRAME.exec(line);
      if (shown) ticks.push(Number(shown[1]));
      return shown !== null || FILTER_LINE.test(line);
    },
  });
  const frameBytes = pass.width * pass.height;
  const grids: Uint8Array[] = [];
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of running.stdout as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= frameBytes) {
      grids.push(cellMeans(pending.subarray(0, frameBytes), pass.width, pass.grid));
      pending = pending.subarray(frameBytes);
    }
  }
  const exit = await running.exited;
  if (exit.code !== 0) throw failedRun("ffmpeg", running, exit, signal);
  return ticks
    .slice(0, grids.length)
    .map((t, k) => ({ time: relativeSeconds(t, video.timeBase, video.startTime), cells: grids[k] }))
    .filter((s) => s.time >= 0);
}
