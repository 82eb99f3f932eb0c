// The job tools: extract_frames (POST /v1/jobs?wait=true), get_job, list_jobs. They call the
// same functions as the REST handlers, inside the caller's request: the same limits, credit
// holds, webhooks, and the jobs GET /v1/jobs lists.
import { z } from "zod";
import {
  type CreateJobRequest,
  CreateJobRequestSchema,
  IdempotencyHeadersSchema,
  JobIdParamSchema,
  JobListSchema,
  JobSchema,
  ListJobsQuerySchema,
  WaitQuerySchema,
} from "../../../schema/api.ts";
import { TEXT_FRAMES_PER_CREDIT } from "../../../schema/plans.ts";
import { DEFAULT_SAMPLE, findSample, SAMPLE_PATH_PREFIX } from "../../../schema/samples.ts";
import { listJobs, progressLine, progressText, readJob, WAIT_LIMIT_MS } from "../../jobs/read.ts";
import { accountReaderOf } from "../../request.ts";
import { cappedJob, cappedRows, FramesOmittedSchema } from "../capped-job.ts";
import { FramePageSchema, framePage, IMAGES_PER_CALL, pageSummary } from "../frame-pages.ts";
import {
  idempotencyKeyArgument,
  type JsonSchema,
  objectSchema,
  parseArguments,
  restBody,
  restParameter,
  restQueryInput,
  type ToolInput,
  zodInput,
} from "../inputs.ts";
import { PREVIEW_LONG_SIDE } from "../previews.ts";
import { reportingProgress } from "../progress.ts";
import { jobFailure, runJob } from "../run-job.ts";
import { jobSummary } from "../summaries.ts";
import { defineTool, READS, STARTS_JOBS, toolError, toolResult } from "../tool.ts";

const WAIT_SECONDS = WAIT_LIMIT_MS / 1000;

// The options only MCP has: the Idempotency-Key header as an argument, and images.
const ExtractOptions = z.strictObject({
  idempotency_key: IdempotencyHeadersSchema.shape["idempotency-key"],
  images: z
    .boolean()
    .optional()
    .describe(
      `Also return the first ${IMAGES_PER_CALL} frames as images (JPEG, at most ${PREVIEW_LONG_SIDE} px) when the job completes within the wait. Default false.`,
    ),
});

// The REST body as documented, without `wait` (this tool always waits), plus those options.
function extractFramesInput(): ToolInput<{
  body: CreateJobRequest;
  options: z.output<typeof ExtractOptions>;
}> {
  const { properties, required } = restBody(CreateJobRequestSchema) as {
    properties: Record<string, JsonSchema>;
    required: string[];
  };
  const { wait: _wait, ...fields } = properties;
  const images = (zodInput(ExtractOptions).json.properties as Record<string, JsonSchema>).images;
  return {
    json: objectSchema(
      {
        ...fields,
        idempotency_key: idempotencyKeyArgument("job"),
        images,
      },
      required,
    ),
    parse({ idempotency_key, images: withImages, ...fields }) {
      return {
        options: parseArguments(ExtractOptions, { idempotency_key, images: withImages }),
        // The REST body schema, with its rules across fields (count with timestamps, end > start…).
        body: parseArguments(CreateJobRequestSchema, fields),
      };
    },
  };
}

/** Every example runs on the service's own sample video (schema/samples.ts). */
const SAMPLE_HINT =
  `To try it without a video of your own, use the sample this service serves: this MCP server's URL with /mcp replaced by ${SAMPLE_PATH_PREFIX}${DEFAULT_SAMPLE} ` +
  `(for example {"url": "https://<this host>${SAMPLE_PATH_PREFIX}${DEFAULT_SAMPLE}", "count": 6}; ${findSample(DEFAULT_SAMPLE)?.description}).`;

export const extractFrames = defineTool({
  name: "extract_frames",
  title: "Extract frames from a video",
  description:
    "Create a frame extraction job for a public video URL (YouTube, TikTok, Instagram, Facebook, X, Vimeo, Google Drive, or a direct .mp4/.mov/.webm link) and wait up to " +
    `${WAIT_LIMIT_MS / 1000} s for it. Modes: interval (a frame every \`every\` seconds), count (\`count\` frames evenly spaced), ` +
    "timestamps (frames at exact seconds), scenes, keyframes, best (the `count` best-looking frames, best first, each with its score), " +
    "and slides (one frame each time the picture settles on new content, for decks and screen recordings: each frame's slide {start, end, repeat_of}; fades and a moving pointer are not changes; count keeps the most distinct). " +
    "Add animated {start?, duration <= 10, fps <= 15, width <= 640, format webp|gif} for a looping moving preview, returned as animated.url (1 credit more). " +
    'Instead of count and a width, pass budget {tokens, model: "claude" | "gpt" | "gemini" | "generic"} to get as many frames, as wide, as fit that many of the model\'s input tokens by its published image rule; job.budget says what was chosen (tokens_estimated, per_frame, frames, width). ' +
    "Returns the job: when completed, each frame's timestamp and signed URL; otherwise its id to poll with get_job. " +
    "Pass images: true to see the first frames as images right away, and view_frames to page through the rest. " +
    "Every completed job carries `video` (duration, size, frame rate; title, uploader and date for platform links). " +
    "Pass captions: true (free) for the video's own captions as WebVTT and, on each frame, the caption on screen at its time. " +
    `Pass text: true to read the text on screen in each frame (OCR; text_languages, default ["en"]), returned on each frame as text {content, confidence, language} and quoted in this tool's summary (1 credit more per ${TEXT_FRAMES_PER_CREDIT} frames read). ` +
    "Costs credits exactly as POST /v1/jobs (1 per started minute processed, 1 per 10 timestamps); failed jobs are free. " +
    SAMPLE_HINT,
  input: extractFramesInput(),
  output: z
    .object({ job: JobSchema, images: FramePageSchema.nullable() })
    .extend(FramesOmittedSchema.shape),
  annotations: STARTS_JOBS,
  async run(c, { body, options }, extra) {
    const job = await runJob(c, body, options.idempotency_key, extra, "Extracting");
    if (job.status === "failed") return toolError(c, jobFailure(job), { job });
    if (!options.images || job.status !== "completed") {
      return cappedJob(job, (shown, omitted, note) =>
        toolResult(`${jobSummary(shown, true)}${note}`, { job: shown, images: null, ...omitted }),
      );
    }
    const { page, content } = await framePage(c, job, 0, IMAGES_PER_CALL);
    return cappedJob(job, (shown, omitted, note) =>
      toolResult(
        `${jobSummary(shown, true)}${note}\n${pageSummary(page)}`,
        { job: shown, images: page, ...omitted },
        [...content],
      ),
    );
  },
});

export const getJob = defineTool({
  name: "get_job",
  title: "Get a job",
  description:
    "Read one job of this account: its status and, while completed and not expired, each frame's timestamp and signed URL. " +
    `With wait: true, blocks up to ${WAIT_LIMIT_MS / 1000} s for it to finish. To see the frames as images, use view_frames.`,
  input: {
    json: objectSchema(
      {
        job_id: restParameter("params", JobIdParamSchema, "id"),
        wait: restParameter("query", WaitQuerySchema, "wait"),
      },
      ["job_id"],
    ),
    parse: (args) =>
      parseArguments(
        z.strictObject({ job_id: JobIdParamSchema.shape.id, wait: WaitQuerySchema.shape.wait }),
        args,
      ),
  },
  output: JobSchema.extend(FramesOmittedSchema.shape),
  annotations: READS,
  async run(c, input, extra) {
    const job = await reportingProgress(
      extra,
      `Waiting for job ${input.job_id}`,
      WAIT_SECONDS,
      () => readJob(accountReaderOf(c), input.job_id, input.wait ?? false),
      () => progressLine(c.env, input.job_id),
    );
    return cappedJob(job, (shown, omitted, note) =>
      toolResult(`${jobSummary(shown, input.wait ?? false)}${note}`, { ...shown, ...omitted }),
    );
  },
});

export const listJobsTool = defineTool({
  name: "list_jobs",
  title: "List jobs",
  description:
    "List this account's jobs, newest first, with paging (limit, skip) and an optional status filter. " +
    "Rows carry no frame URLs: read one job with get_job or view_frames for those.",
  input: restQueryInput(ListJobsQuerySchema, ["limit", "skip", "status"]),
  output: JobListSchema,
  annotations: READS,
  async run(c, input) {
    const list = await listJobs(accountReaderOf(c), input);
    return cappedRows(list.data, list.skip, (data, note) => {
      const rows = data.map((job) =>
        job.status === "processing" && job.progress
          ? `- ${job.id} processing (${progressText(job.progress)}), ${job.created_at}`
          : `- ${job.id} ${job.status}, ${job.frames_count ?? 0} frames, ${job.created_at}`,
      );
      const shown = `Jobs ${list.skip + 1}–${list.skip + data.length} of ${list.total}`;
      const text =
        data.length > 0 ? `${shown}:${note}\n${rows.join("\n")}` : `No jobs (of ${list.total}).`;
      return toolResult(text, { ...list, data });
    });
  },
});
