// view_frames: a completed job's frames as images an agent can see, a page at a time.
import { z } from "zod";
import { JobIdParamSchema } from "../../../schema/api.ts";
import { ApiError } from "../../errors.ts";
import { readDemoJob, readJob } from "../../jobs/read.ts";
import { accountReaderOf } from "../../request.ts";
import {
  decodeCursor,
  FramePageSchema,
  framePage,
  IMAGES_PER_CALL,
  pageSummary,
} from "../frame-pages.ts";
import { zodInput } from "../inputs.ts";
import { PREVIEW_LONG_SIDE } from "../previews.ts";
import { defineTool, READS, toolResult } from "../tool.ts";

export const viewFrames = defineTool({
  name: "view_frames",
  title: "View frames as images",
  description:
    `Show a completed job's frames as images (JPEG, at most ${PREVIEW_LONG_SIDE} px on the long side), ` +
    `up to ${IMAGES_PER_CALL} per call, each with its index, timestamp and (for jobs with captions) the caption on screen. Page with the next_cursor ` +
    "each call returns until it is null. Works for demo ids from create_demo too.",
  input: zodInput(
    z.strictObject({
      job_id: JobIdParamSchema.shape.id.describe("A job id, or a demo id"),
      cursor: z
        .string()
        .max(200)
        .optional()
        .describe("next_cursor of the previous call; omit for the first page"),
      limit: z
        .number()
        .int()
        .min(1)
        .max(IMAGES_PER_CALL)
        .optional()
        .describe(`Frames per page, 1–${IMAGES_PER_CALL} (default ${IMAGES_PER_CALL})`),
    }),
  ),
  output: FramePageSchema,
  annotations: READS,
  async run(c, input) {
    const job = await readJobOrDemo(accountReaderOf(c), input.job_id);
    if (job.status !== "completed") {
      throw new ApiError(
        "InvalidRequest",
        `The job is ${job.status}: frames can be viewed only while it is completed and not expired`,
        {
          userMessage:
            job.status === "queued" || job.status === "processing"
              ? "The job is still running. Wait for it with get_job (wait: true), then view its frames."
              : `The job is ${job.status}, so it has no frames to show.`,
        },
      );
    }
    const offset = input.cursor ? decodeCursor(input.cursor, job.id, job.frames.length) : 0;
    const { page, content } = await framePage(c, job, offset, input.limit ?? IMAGES_PER_CALL);
    return toolResult(pageSummary(page), page, content);
  },
});

type Reader = Parameters<typeof readJob>[0];

/** The account's job, else a demo job (demo ids are public, as GET /v1/demo/{id} is). */
async function readJobOrDemo(r: Reader, id: string) {
  try {
    return await readJob(r, id, false);
  } catch (err) {
    if (!(err instanceof ApiError) || err.apiName !== "JobNotFound") throw err;
    return readDemoJob(r, id);
  }
}
