// The job tools' answers under the skimming tools' cap (decision 0321): a completed job of
// thousands of frames is megabytes of signed URLs, and a page of 100 jobs is tens of thousands
// of tokens. What fits is kept in order; what does not is named, with the call that fetches it.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  DEFAULT_MAX_TOKENS,
  DEFAULT_TOKEN_MODEL,
  encodeSkimCursor,
  indexRanges,
  mostThatFit,
  rangesText,
  responseTokens,
} from "./response-budget.ts";
import type { Job } from "./run-job.ts";

const fits = (result: CallToolResult) =>
  responseTokens(result, DEFAULT_TOKEN_MODEL).total <= DEFAULT_MAX_TOKENS;

export const FramesOmittedSchema = z.object({
  frames_omitted: z
    .object({ frames: z.array(z.object({ from: z.number(), to: z.number() })), why: z.string() })
    .optional()
    .describe("Frames left out of this answer (they did not fit its token cap)"),
  next_cursor: z
    .string()
    .optional()
    .describe("Pass to zoom as {cursor} to page the frames left out, under the cap"),
});
export type FramesOmitted = z.infer<typeof FramesOmittedSchema>;

/**
 * `render(shown, omitted, note)` builds the answer with the job's first frames; the answer
 * with every frame is given when it fits, else the most frames that fit.
 */
export function cappedJob(
  job: Job,
  render: (shown: Job, omitted: FramesOmitted, note: string) => CallToolResult,
): CallToolResult {
  const whole = render(job, {}, "");
  if (fits(whole) || job.frames.length === 0) return whole;
  const withFrames = (n: number) => {
    const left = job.frames.slice(n).map((frame) => frame.index);
    const omitted: FramesOmitted = {
      frames_omitted: {
        frames: indexRanges(left),
        why: `did not fit ${DEFAULT_MAX_TOKENS} tokens`,
      },
      next_cursor: encodeSkimCursor("zoom", job.id, n),
    };
    const note = ` Left out of this answer (it would pass ${DEFAULT_MAX_TOKENS} tokens): frames ${rangesText(indexRanges(left))}; call zoom with cursor "${omitted.next_cursor}" to page them.`;
    return render({ ...job, frames: job.frames.slice(0, n) }, omitted, note);
  };
  return withFrames(mostThatFit(job.frames.length, (n) => fits(withFrames(n))));
}

/** How a page of rows names what it left out, and the call that reads them. */
export interface RowPages {
  noun: string;
  next(skip: number): string;
}
const JOB_PAGES: RowPages = { noun: "jobs", next: (skip) => `call list_jobs with skip ${skip}` };

/** A page of rows (jobs by default) cut to what fits; the rest are named with the skip that lists them. */
export function cappedRows<Row>(
  rows: Row[],
  skip: number,
  render: (shown: Row[], note: string) => CallToolResult,
  pages: RowPages = JOB_PAGES,
): CallToolResult {
  const whole = render(rows, "");
  if (fits(whole)) return whole;
  const withRows = (n: number) =>
    render(
      rows.slice(0, n),
      ` Left out of this answer (it would pass ${DEFAULT_MAX_TOKENS} tokens): ${pages.noun} ${skip + n + 1}–${skip + rows.length}; ${pages.next(skip + n)} for them.`,
    );
  return withRows(mostThatFit(rows.length, (n) => fits(withRows(n))));
}
