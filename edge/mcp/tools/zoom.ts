// zoom: frames of a sub-range of a video (issue 38), after an overview showed where to look.
// A new count job over start–end (charged as REST charges it), then its frames a page at a
// time: each answer under its token cap, inline images at the largest size that fits what the
// cap leaves (decision 0322), what did not fit named with a cursor.
import type { ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { z } from "zod";
import {
  type CreateJobRequest,
  CreateJobRequestSchema,
  IdempotencyHeadersSchema,
  JobIdParamSchema,
  VideoSchema,
} from "../../../schema/api.ts";
import { imageTokens } from "../../../schema/image-tokens.ts";
import { TEXT_FRAMES_PER_CREDIT } from "../../../schema/plans.ts";
import { FrameTextSchema } from "../../../schema/text.ts";
import type { AppEnv } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { readJob } from "../../jobs/read.ts";
import { accountReaderOf } from "../../request.ts";
import { frameKeys } from "../frame-pages.ts";
import { parseArguments, zodInput } from "../inputs.ts";
import { toBase64 } from "../jpeg.ts";
import {
  framePreview,
  PREVIEW_MIME_TYPE,
  PREVIEW_SIDES,
  type Preview,
  type PreviewSide,
  previewSizeOf,
} from "../previews.ts";
import {
  type Budget,
  BudgetOptions,
  budgetOf,
  decodeSkimCursor,
  encodeSkimCursor,
  indexRanges,
  mostThatFit,
  rangesText,
  responseTokens,
} from "../response-budget.ts";
import { type Job, jobFailure, notCompleted, runJob } from "../run-job.ts";
import { defineTool, STARTS_JOBS, toolError, toolResult } from "../tool.ts";

export const DEFAULT_ZOOM_FRAMES = 8;
/** Inline frames per answer at most, whatever the cap: past this, pictures get too small. */
export const MAX_INLINE_PER_PAGE = 20;
/** Frames by URL per answer at most (the cap usually stops sooner). */
export const MAX_LINKED_PER_PAGE = 200;
const ZOOM_RESOLUTION = "720";

const ZoomInput = z
  .strictObject({
    url: CreateJobRequestSchema.shape.url
      .optional()
      .describe(
        "The video: a public link. Or pass job_id (e.g. an overview's) to zoom into its video",
      ),
    job_id: JobIdParamSchema.shape.id
      .optional()
      .describe("A job of this account whose video to zoom into (an overview's job_id)"),
    start: CreateJobRequestSchema.shape.start.describe("Seconds from the start of the range"),
    end: CreateJobRequestSchema.shape.end.describe("Seconds: the range's end"),
    count: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe(
        `Frames evenly spaced over start–end; default ${DEFAULT_ZOOM_FRAMES} (at most your plan's frames per job)`,
      ),
    text: CreateJobRequestSchema.shape.text.describe(
      `Read the text on screen in each frame (OCR); default false. 1 credit per ${TEXT_FRAMES_PER_CREDIT} frames`,
    ),
    text_languages: CreateJobRequestSchema.shape.text_languages,
    captions: CreateJobRequestSchema.shape.captions.describe(
      "The caption on screen at each frame; default false (free)",
    ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LINKED_PER_PAGE)
      .optional()
      .describe(
        `Frames per answer at most; default ${DEFAULT_ZOOM_FRAMES} with inline_images (at most ${MAX_INLINE_PER_PAGE}), else as many as fit`,
      ),
    cursor: z
      .string()
      .max(200)
      .optional()
      .describe("next_cursor of a previous zoom answer: the frames it left out"),
    idempotency_key: IdempotencyHeadersSchema.shape["idempotency-key"],
  })
  .extend(BudgetOptions.shape);
type ZoomArgs = z.output<typeof ZoomInput>;

const ZoomFrameSchema = z.object({
  index: z.number().int(),
  timestamp: z.number(),
  pts: z.number().nullable(),
  url: z.url().nullable().describe("The frame at its delivered size, signed"),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  tokens: z
    .number()
    .int()
    .nullable()
    .describe("What the frame at url costs, by budget.model's rule"),
  shown: z
    .object({ width: z.number().int(), height: z.number().int(), tokens: z.number().int() })
    .nullable()
    .describe("The inline image of this frame in this answer, when there is one"),
  note: z.string().nullable(),
  words_left_out: z
    .boolean()
    .optional()
    .describe(
      "The frame's caption and text alone pass max_tokens: read them with get_job (frames[].caption, frames[].text)",
    ),
  caption: z.string().nullable().optional(),
  text: FrameTextSchema.nullable().optional(),
});
type ZoomFrame = z.infer<typeof ZoomFrameSchema>;

export const ZoomSchema = z.object({
  job_id: z.uuid(),
  credits_charged: z.number().int().nullable(),
  video: VideoSchema.nullable().optional(),
  range: z.object({ start: z.number(), end: z.number().nullable() }),
  total_frames: z.number().int(),
  offset: z.number().int(),
  image_long_side: z
    .number()
    .int()
    .nullable()
    .describe("The long side inline images were scaled to (null: no inline images)"),
  frames: z.array(ZoomFrameSchema),
  omitted: z
    .object({ frames: z.array(z.object({ from: z.number(), to: z.number() })), why: z.string() })
    .nullable(),
  next_cursor: z.string().nullable(),
  budget: z.object({ max_tokens: z.number().int(), model: z.string() }),
});
type Zoom = z.infer<typeof ZoomSchema>;

export const zoom = defineTool({
  name: "zoom",
  title: "Zoom into part of a video",
  description:
    "Frames of a sub-range of a video, after overview showed where to look: `count` frames (default 8) evenly spaced over start–end of a url, " +
    "or of the video of a job of yours (job_id, e.g. the overview's). Each frame comes with its time, signed URL, size and token cost; " +
    "with inline_images: true the frames come as images too, scaled to the largest of 1024, 768, 512, 384 or 256 px (long side) at which the answer fits max_tokens. " +
    "Every answer stays under max_tokens (default 15,000); frames that do not fit are named and next_cursor fetches them (call zoom with only cursor). " +
    "Costs what the same count job costs over REST (1 credit per started minute of start–end, 100 frames a minute included; " +
    `text: true adds 1 credit per ${TEXT_FRAMES_PER_CREDIT} frames); paging is free.`,
  input: zodInput(ZoomInput),
  output: ZoomSchema,
  annotations: STARTS_JOBS,
  async run(c, input, extra) {
    const budget = budgetOf(input);
    if (input.cursor !== undefined) {
      const at = continued(input);
      const job = await readJob(accountReaderOf(c), at.jobId, false);
      if (job.status !== "completed") throw notCompleted(job);
      if (at.offset >= job.frames.length) throw badCursor();
      return page(c, job, at.offset, budget, input.limit);
    }
    const body = await jobBody(c, input);
    const job = await runJob(c, body, input.idempotency_key, extra, "Zooming in");
    if (job.status === "failed") return toolError(c, jobFailure(job), { job_id: job.id });
    if (job.status !== "completed") {
      return toolResult(
        `Job ${job.id} is ${job.status} after the wait. Call get_job {"job_id": "${job.id}", "wait": true} until it completes, then zoom with cursor "${encodeSkimCursor("zoom", job.id, 0)}".`,
        {
          job_id: job.id,
          credits_charged: null,
          video: null,
          range: { start: body.start ?? 0, end: body.end ?? null },
          total_frames: 0,
          offset: 0,
          image_long_side: null,
          frames: [],
          omitted: null,
          next_cursor: encodeSkimCursor("zoom", job.id, 0),
          budget: { max_tokens: budget.maxTokens, model: budget.model },
        } satisfies Zoom,
      );
    }
    return page(c, job, 0, budget, input.limit);
  },
});

function badCursor() {
  return new ApiError("InvalidRequest", "cursor: not a cursor of a zoom", {
    userMessage: "That cursor is not one a zoom gave. Start again without it.",
  });
}

/** A cursor call takes only the cursor, the page size and the answer's budget. */
function continued(input: ZoomArgs) {
  const extras = [
    "url",
    "job_id",
    "start",
    "end",
    "count",
    "text",
    "captions",
    "idempotency_key",
  ].filter((name) => input[name as keyof ZoomArgs] !== undefined);
  const at = decodeSkimCursor("zoom", input.cursor ?? "");
  if (!at) throw badCursor();
  if (extras.length > 0) {
    throw new ApiError(
      "InvalidRequest",
      `cursor: continues a zoom; it takes no ${extras.join(", ")}`,
      {
        userMessage:
          "Pass the cursor alone (with limit, max_tokens, model or inline_images if you like).",
      },
    );
  }
  return at;
}

async function jobBody(c: Context<AppEnv>, input: ZoomArgs): Promise<CreateJobRequest> {
  if ((input.url === undefined) === (input.job_id === undefined)) {
    throw new ApiError("InvalidRequest", "url, job_id: pass exactly one (or a cursor)", {
      userMessage: "Pass the video's url, or the job_id of a job of that video, or a cursor.",
    });
  }
  const url = input.url ?? (await readJob(accountReaderOf(c), input.job_id as string, false)).url;
  return parseArguments(CreateJobRequestSchema, {
    url,
    mode: "count",
    count: input.count ?? DEFAULT_ZOOM_FRAMES,
    ...(input.start !== undefined ? { start: input.start } : {}),
    ...(input.end !== undefined ? { end: input.end } : {}),
    resolution: ZOOM_RESOLUTION,
    ...(input.captions ? { captions: true } : {}),
    ...(input.text ? { text: true } : {}),
    ...(input.text && input.text_languages ? { text_languages: input.text_languages } : {}),
  });
}

interface Shown {
  side: PreviewSide;
  previews: Map<number, Preview | { width: number; height: number }>;
}

async function page(
  c: Context<AppEnv>,
  job: Job,
  offset: number,
  budget: Budget,
  limit: number | undefined,
) {
  const frames = job.frames.slice(offset);
  const size = job.width && job.height ? { width: job.width, height: job.height } : null;
  const keys = await frameKeys(c, job.id);
  const showable = (frame: Job["frames"][number]) =>
    frame.status === "ok" && Boolean(frame.url) && Boolean(keys.get(frame.index));
  const captioned = Boolean((job.options as { captions?: boolean }).captions);
  const options = job.options as { start?: number; end?: number };

  const render = (count: number, shown: Shown | null, bare = false) => {
    const slice = frames.slice(0, count);
    const next = offset + count;
    const left = job.frames.slice(next).map((f) => f.index);
    const entries: ZoomFrame[] = slice.map((frame, i) => {
      // A frame whose words alone pass the cap comes without them, and says so.
      const wordless = bare && i === slice.length - 1;
      const preview = shown && showable(frame) ? shown.previews.get(frame.index) : undefined;
      return {
        index: frame.index,
        timestamp: frame.timestamp,
        pts: frame.pts ?? null,
        url: frame.url,
        width: frame.status === "ok" ? (size?.width ?? null) : null,
        height: frame.status === "ok" ? (size?.height ?? null) : null,
        tokens: frame.status === "ok" && size ? imageTokens(budget.model, size) : null,
        shown: preview
          ? {
              width: preview.width,
              height: preview.height,
              tokens: imageTokens(budget.model, preview),
            }
          : null,
        note:
          frame.status !== "ok"
            ? `not extracted: ${frame.error ?? "error"}`
            : frame.url
              ? null
              : "delivered only inside the job's ZIP",
        ...(captioned && !wordless ? { caption: frame.caption ?? null } : {}),
        ...(frame.text !== undefined && !wordless ? { text: frame.text } : {}),
        ...(wordless ? { words_left_out: true } : {}),
      };
    });
    const structured: Zoom = {
      job_id: job.id,
      credits_charged: job.credits_charged,
      video: job.video ?? null,
      range: { start: options.start ?? 0, end: options.end ?? job.video?.duration_seconds ?? null },
      total_frames: job.frames.length,
      offset,
      image_long_side: shown ? shown.side : null,
      frames: entries,
      omitted:
        left.length > 0
          ? {
              frames: indexRanges(left),
              why:
                count < frames.length && limit !== undefined && count === limit
                  ? `limit ${limit} per answer`
                  : `did not fit max_tokens ${budget.maxTokens}`,
            }
          : null,
      next_cursor: left.length > 0 ? encodeSkimCursor("zoom", job.id, next) : null,
      budget: { max_tokens: budget.maxTokens, model: budget.model },
    };
    const more: ContentBlock[] = [];
    for (const entry of entries) {
      more.push({ type: "text", text: frameLine(entry, job.frames.length, shown !== null) });
      const preview = shown?.previews.get(entry.index);
      if (preview && "bytes" in preview) {
        more.push({ type: "image", data: toBase64(preview.bytes), mimeType: PREVIEW_MIME_TYPE });
      } else if (preview && shown) {
        // Planning: an image of the planned size stands in for the preview not yet made.
        more.push(placeholderImage(preview));
      }
    }
    return toolResult(summary(job, structured, budget), structured, more);
  };
  const fits = (count: number, shown: Shown | null) =>
    responseTokens(render(count, shown), budget.model).total <= budget.maxTokens;

  if (!budget.inline || !size) {
    const most = Math.min(frames.length, limit ?? MAX_LINKED_PER_PAGE);
    const count = mostThatFit(most, (n) => fits(n, null));
    return count > 0 ? render(count, null) : render(1, null, true);
  }
  // Inline: the largest side at which the page's frames all fit, else as many as fit the least.
  const wanted = Math.min(
    frames.length,
    Math.min(limit ?? DEFAULT_ZOOM_FRAMES, MAX_INLINE_PER_PAGE),
  );
  const planned = (side: PreviewSide): Shown => ({
    side,
    previews: new Map(
      frames
        .slice(0, wanted)
        .filter(showable)
        .map((f) => [f.index, previewSizeOf(size, side)]),
    ),
  });
  let side: PreviewSide = PREVIEW_SIDES[PREVIEW_SIDES.length - 1];
  let count = 0;
  for (const candidate of PREVIEW_SIDES) {
    const fitting = mostThatFit(wanted, (n) => fits(n, planned(candidate)));
    if (fitting > count) {
      side = candidate;
      count = fitting;
    }
    if (fitting === wanted) break;
  }
  if (count === 0) return render(1, null, true);
  const made = await Promise.all(
    frames
      .slice(0, count)
      .filter(showable)
      .map(async (frame) => {
        const key = keys.get(frame.index) as string;
        const preview = await framePreview(c.env, { key, signedUrl: frame.url as string }, side);
        return [frame.index, preview] as const;
      }),
  );
  const shown: Shown = { side, previews: new Map(made) };
  // The made previews may differ from the plan by a pixel: measured again, fewer if need be.
  while (count > 1 && !fits(count, shown)) count--;
  return render(count, shown);
}

/**
 * A stand-in image block of the planned size while planning: a JPEG header whose frame
 * segment carries the size, so the rule counts it as the preview it stands for.
 */
function placeholderImage(size: { width: number; height: number }): ContentBlock {
  const bytes = new Uint8Array([
    0xff,
    0xd8,
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    size.height >> 8,
    size.height & 0xff,
    size.width >> 8,
    size.width & 0xff,
    0x03,
    0x01,
    0x22,
    0x00,
    0x02,
    0x11,
    0x01,
    0x03,
    0x11,
    0x01,
    0xff,
    0xd9,
  ]);
  return { type: "image", data: toBase64(bytes), mimeType: PREVIEW_MIME_TYPE };
}

const secondsText = (value: number) => `${Number(value.toFixed(3))} s`;

function frameLine(entry: ZoomFrame, total: number, inline: boolean): string {
  const where = `Frame ${entry.index} of ${total} at ${secondsText(entry.timestamp)}`;
  if (entry.note) return `${where}: ${entry.note}.`;
  const cut = entry.words_left_out
    ? " (its caption and text alone pass max_tokens: read them with get_job)"
    : "";
  const caption =
    entry.caption === undefined
      ? ""
      : entry.caption === null
        ? ", no caption on screen"
        : `, caption on screen: ${JSON.stringify(entry.caption)}`;
  const text =
    entry.text === undefined || entry.text === null
      ? ""
      : entry.text.content === ""
        ? ", no text on screen"
        : `, text on screen: ${JSON.stringify(entry.text.content)}`;
  const size = `${entry.width}×${entry.height}, ${entry.tokens} tokens`;
  const image = entry.shown
    ? ` (shown below at ${entry.shown.width}×${entry.shown.height}, ${entry.shown.tokens} tokens)`
    : "";
  return inline
    ? `${where}${caption}${text}${cut}${image}:`
    : `${where}${caption}${text}${cut}: ${entry.url} (${size})`;
}

function summary(job: Job, zoomed: Zoom, budget: Budget): string {
  const shown = zoomed.frames;
  const range =
    shown.length > 0
      ? `frames ${shown[0].index}–${shown[shown.length - 1].index} of ${zoomed.total_frames}`
      : `no frames of ${zoomed.total_frames}`;
  const images =
    zoomed.image_long_side !== null
      ? ` as images of at most ${zoomed.image_long_side} px (the largest that fit max_tokens ${budget.maxTokens} by the ${budget.model} rule)`
      : " by signed URL (pass inline_images: true to see them here)";
  const span = `${secondsText(zoomed.range.start)}–${zoomed.range.end !== null ? secondsText(zoomed.range.end) : "the end"}`;
  const left = zoomed.omitted
    ? ` Left out of this answer (${zoomed.omitted.why}): frames ${rangesText(zoomed.omitted.frames)}; call zoom with cursor "${zoomed.next_cursor}" for them.`
    : " That is the last of them.";
  return `Zoom job ${job.id} over ${span} (${job.credits_charged ?? 0} credit(s) charged): ${range}${images}.${left}`;
}
