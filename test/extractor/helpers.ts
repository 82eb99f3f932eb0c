// Runs real extraction jobs into a temp directory and reads back what came out.
// Failures are expected in these suites; their logs would only bury the test report.
process.env.EXTRACTOR_LOG ??= "silent";

import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtractionOutcome, ExtractionSettings } from "../../extractor/job.ts";
import { extractFrames } from "../../extractor/job.ts";
import { DirectorySink } from "../../extractor/output/directory-sink.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { readImagePattern } from "../support/videos.ts";

export interface JobRun {
  outcome: ExtractionOutcome;
  directory: string;
}

export async function runJob(
  input: string,
  options: Partial<JobOptions>,
  settings: ExtractionSettings & {
    maxVideoSeconds?: number;
    clipToMax?: boolean;
    maxFrames?: number;
  } = {},
): Promise<JobRun> {
  const directory = await mkdtemp(join(tmpdir(), "stills-extract-"));
  const outcome = await extractFrames(
    {
      input,
      options: { mode: "interval", format: "jpg", resolution: 1080, output: "urls", ...options },
      maxVideoSeconds: settings.maxVideoSeconds ?? 3600,
      clipToMax: settings.clipToMax ?? false,
      maxFrames: settings.maxFrames ?? 10_000,
    },
    new DirectorySink(directory),
    settings,
  );
  return { outcome, directory };
}

/** The frame number drawn in each delivered frame (null for error frames), in index order. */
export async function deliveredNumbers(run: JobRun): Promise<(number | null)[]> {
  const numbers: (number | null)[] = [];
  for (const frame of run.outcome.frames) {
    if (frame.status !== "ok" || !frame.key) {
      numbers.push(null);
      continue;
    }
    const pattern = await readImagePattern(await readFile(join(run.directory, frame.key)));
    numbers.push(pattern.number);
  }
  return numbers;
}

export async function frameBytes(run: JobRun, index: number): Promise<Buffer> {
  const frame = run.outcome.frames.find((f) => f.index === index);
  if (!frame?.key) throw new Error(`frame ${index} was not delivered`);
  return readFile(join(run.directory, frame.key));
}

/** Index of the frame on screen at t in a constant-rate video: last n with n/fps ≤ t. */
export function cfrFrameAt(t: number, fps: number): number {
  return Math.floor(t * fps + 1e-9);
}
