// overview: the cheapest first look at a video (issue 38). One contact sheet of the whole video
// or a range, times burned into its tiles (the extractor's storyboard, decision 0050), with the
// captions and the text on screen in each tile's span; every answer under its token cap, what
// did not fit named with a cursor (decisions 0320, 0321).
import type { ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { z } from "zod";
import {
  type CreateJobRequest,
  CreateJobRequestSchema,
  type FrameSchema,
  IdempotencyHeadersSchema,
  StoryboardSchema,
  VideoSchema,
} from "../../../schema/api.ts";
import { imageTokens } from "../../../schema/image-tokens.ts";
import { TEXT_FRAMES_PER_CREDIT } from "../../../schema/plans.ts";
import { FrameTextSchema } from "../../../schema/text.ts";
import type { AppEnv } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { readJob } from "../../jobs/read.ts";
import { accountReaderOf } from "../../request.ts";
import { frameKeys, siblingKey } from "../frame-pages.ts";
import { parseArguments, zodInput } from "../inputs.ts";
import { toBase64 } from "../jpeg.ts";
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
import { cuesIn, readOurWebVtt, sheetTiles, type Tile } from "../skim-tiles.ts";
import { defineTool, STARTS_JOBS, toolError, toolResult } from "../tool.ts";
import { videoLine } from "../video-line.ts";

export const DEFAULT_TILES = 20;
export const MAX_TILES = 40;
/** The overview reads text on 720p frames: every plan allows it, and titles read well. */
const OVERVIEW_RESOLUTION = "720";

const OverviewInput = z
  .strictObject({
    url: CreateJobRequestSchema.shape.url
      .optional()
      .describe("The video: a public link, as extract_frames takes. Omit when passing cursor"),
    start: CreateJobRequestSchema.shape.start.describe(
      "Seconds from the start; default 0 (the whole video)",
    ),
    end: CreateJobRequestSchema.shape.end.describe("Seconds; default the video's end"),
    tiles: z
      .number()
      .int()
      .min(2)
      .max(MAX_TILES)
      .optional()
      .describe(
        `Tiles on the sheet (frames evenly spaced over the range, 5 to a row); default ${DEFAULT_TILES}`,
      ),
    text: z
      .boolean()
      .optional()
      .describe(
        `Read the text on screen in each tile's frame (OCR); default true. 1 credit per ${TEXT_FRAMES_PER_CREDIT} tiles`,
      ),
    text_languages: CreateJobRequestSchema.shape.text_languages,
    captions: z
      .boolean()
      .optional()
      .describe("The video's own captions in each tile's span; default true (free)"),
    captions_language: CreateJobRequestSchema.shape.captions_language,
    cursor: z
      .string()
      .max(200)
      .optional()
      .describe("next_cursor of a previous overview answer: the tiles it left out"),
    idempotency_key: IdempotencyHeadersSchema.shape["idempotency-key"],
  })
  .extend(BudgetOptions.shape);
type OverviewArgs = z.output<typeof OverviewInput>;

const OverviewTileSchema = z.object({
  tile: z.number().int(),
  time: z.number().describe("Seconds: the time burned into the tile"),
  label: z.string().describe("The burned time as written on the tile, hh:mm:ss.mmm"),
  frame_index: z.number().int().describe("The job's frame shown (frames[].index)"),
  pts: z.number().nullable(),
  x: z.number().int(),
  y: z.number().int(),
  span: z.object({ start: z.number(), end: z.number() }),
  captions: z.array(z.string()).optional(),
  text: FrameTextSchema.nullable().optional(),
  words_left_out: z
    .object({ captions: z.number().int(), text: z.boolean() })
    .optional()
    .describe(
      "A tile whose words alone pass max_tokens: how many of its captions, and whether its text, were left out (all are in get_job: captions.url, frames[].text)",
    ),
});

export const OverviewSchema = z.object({
  job_id: z.uuid(),
  credits_charged: z.number().int().nullable(),
  video: VideoSchema.nullable().optional(),
  range: z.object({ start: z.number(), end: z.number() }),
  sheet: StoryboardSchema.pick({ columns: true, rows: true, tile_width: true, tile_height: true })
    .extend({
      url: z.url().nullable(),
      width: z.number().int(),
      height: z.number().int(),
      tokens: z.number().int().describe("What the sheet costs the model, by budget.model's rule"),
      inline: z.boolean(),
    })
    .nullable(),
  total_tiles: z.number().int(),
  offset: z.number().int(),
  tiles: z.array(OverviewTileSchema),
  omitted: z
    .object({ tiles: z.array(z.object({ from: z.number(), to: z.number() })), why: z.string() })
    .nullable(),
  next_cursor: z.string().nullable(),
  budget: z.object({ max_tokens: z.number().int(), model: z.string() }),
});
type Overview = z.infer<typeof OverviewSchema>;

export const overview = defineTool({
  name: "overview",
  title: "Overview of a video (contact sheet)",
  description:
    "The cheapest first look at a video: one contact sheet (a grid of frames evenly spaced over the whole video or start–end, " +
    "5 tiles to a row, 320 px each, each tile's time burned into its foot as hh:mm:ss.mmm), with, for each tile's span of the video, " +
    "the captions on screen in it and the text read on the tile's frame. Then zoom into a span that matters with zoom. " +
    "The sheet comes as a signed URL with its size and token cost; pass inline_images: true to get it as an image. " +
    `Every answer stays under max_tokens (default 15,000; text, structured content and images counted as the documentation says); tiles that do not fit are named, and next_cursor fetches them (call overview with only cursor). ` +
    `Costs what the same job costs over REST: a count job of \`tiles\` frames at 720p, the sheet as one more frame, and with text 1 credit per ${TEXT_FRAMES_PER_CREDIT} tiles ` +
    "(e.g. 20 tiles of a 10-minute video: 10 + 2 = 12 credits; of a 1-minute one: 1 + 2 = 3). Captions are free; a failed job is free.",
  input: zodInput(OverviewInput),
  output: OverviewSchema,
  annotations: STARTS_JOBS,
  async run(c, input, extra) {
    const budget = budgetOf(input);
    if (input.cursor !== undefined) {
      const at = continued(input);
      const job = await readJob(accountReaderOf(c), at.jobId, false);
      if (job.status !== "completed") throw notCompleted(job);
      return answer(c, job, at.offset, { ...budget, inline: false });
    }
    if (input.url === undefined) {
      throw new ApiError("InvalidRequest", "url: Required (or pass cursor)", {
        userMessage: "Pass the video's url, or the cursor of a previous overview.",
      });
    }
    const job = await runJob(c, jobBody(input), input.idempotency_key, extra, "Making an overview");
    if (job.status === "failed") return toolError(c, jobFailure(job), { job_id: job.id });
    if (job.status !== "completed") {
      return toolResult(
        `Job ${job.id} is ${job.status} after the wait. Call get_job {"job_id": "${job.id}", "wait": true} until it completes, then overview with cursor "${encodeSkimCursor("overview", job.id, 0)}".`,
        emptyOverview(job, budget),
      );
    }
    return answer(c, job, 0, budget);
  },
});

/** A cursor call takes only the cursor and the answer's budget. */
function continued(input: OverviewArgs) {
  const extras = ["url", "start", "end", "tiles", "text", "captions", "idempotency_key"].filter(
    (name) => input[name as keyof OverviewArgs] !== undefined,
  );
  const at = decodeSkimCursor("overview", input.cursor ?? "");
  if (!at || extras.length > 0) {
    throw new ApiError(
      "InvalidRequest",
      at
        ? `cursor: continues an overview; it takes no ${extras.join(", ")}`
        : "cursor: not a cursor of an overview",
      {
        userMessage: at
          ? "Pass the cursor alone (with max_tokens, model or inline_images if you like)."
          : "That cursor is not one an overview gave. Start again without it.",
      },
    );
  }
  return at;
}

function jobBody(input: OverviewArgs): CreateJobRequest {
  const text = input.text ?? true;
  const captions = input.captions ?? true;
  // Checked by the REST body's own schema, so a bad range reads as it does over REST.
  return parseArguments(CreateJobRequestSchema, {
    url: input.url,
    mode: "count",
    count: input.tiles ?? DEFAULT_TILES,
    ...(input.start !== undefined ? { start: input.start } : {}),
    ...(input.end !== undefined ? { end: input.end } : {}),
    resolution: OVERVIEW_RESOLUTION,
    storyboard: true,
    ...(captions ? { captions: true } : {}),
    ...(captions && input.captions_language ? { captions_language: input.captions_language } : {}),
    ...(text ? { text: true } : {}),
    ...(text && input.text_languages ? { text_languages: input.text_languages } : {}),
  });
}

function rangeOf(job: Job) {
  const options = job.options as { start?: number; end?: number };
  const duration = job.video?.duration_seconds ?? job.duration_seconds ?? options.end ?? 0;
  const start = options.start ?? 0;
  return { start, end: Math.min(options.end ?? duration, Math.max(duration, start)) };
}

function emptyOverview(job: Job, budget: Budget): Overview {
  return {
    job_id: job.id,
    credits_charged: job.credits_charged,
    video: job.video ?? null,
    range: rangeOf(job),
    sheet: null,
    total_tiles: 0,
    offset: 0,
    tiles: [],
    omitted: null,
    next_cursor: null,
    budget: { max_tokens: budget.maxTokens, model: budget.model },
  };
}

async function answer(c: Context<AppEnv>, job: Job, offset: number, budget: Budget) {
  const board = job.storyboard;
  if (!board) {
    throw new ApiError("InvalidRequest", `Job ${job.id} has no contact sheet`, {
      userMessage: "That job was not made by overview (it has no contact sheet).",
    });
  }
  const range = rangeOf(job);
  const tiles = sheetTiles(job.frames, board, range);
  if (offset > tiles.length) {
    throw new ApiError("InvalidRequest", "cursor: past the last tile", {
      userMessage: "That cursor is past the last tile. Start again without it.",
    });
  }
  const keys = await frameKeys(c, job.id);
  const cues = await captionCues(c, job, keys);
  const width = board.columns * board.tile_width;
  const height = board.rows * board.tile_height;
  const sheet = {
    columns: board.columns,
    rows: board.rows,
    tile_width: board.tile_width,
    tile_height: board.tile_height,
    url: board.image_url,
    width,
    height,
    tokens: imageTokens(budget.model, { width, height }),
    inline: false,
  };
  let image: ContentBlock | null = null;
  if (budget.inline && offset === 0) {
    const key = siblingKey(keys, "storyboard.jpg");
    const stored = key ? await c.env.FILES.get(key) : null;
    if (!stored) throw sheetGone();
    image = {
      type: "image",
      data: toBase64(new Uint8Array(await stored.arrayBuffer())),
      mimeType: "image/jpeg",
    };
  }
  const render = (count: number, withImage: boolean, cut?: Cut) => {
    const shown = tiles.slice(offset, offset + count);
    const next = offset + count;
    const left = tiles.slice(next).map((t) => t.tile);
    const structured: Overview = {
      job_id: job.id,
      credits_charged: job.credits_charged,
      video: job.video ?? null,
      range,
      sheet: { ...sheet, inline: withImage },
      total_tiles: tiles.length,
      offset,
      tiles: shown.map((t, i) => tileEntry(t, cues, i === shown.length - 1 ? cut : undefined)),
      omitted:
        left.length > 0
          ? { tiles: indexRanges(left), why: `did not fit max_tokens ${budget.maxTokens}` }
          : null,
      next_cursor: left.length > 0 ? encodeSkimCursor("overview", job.id, next) : null,
      budget: { max_tokens: budget.maxTokens, model: budget.model },
    };
    const more: ContentBlock[] = withImage && image ? [image] : [];
    for (const entry of structured.tiles) more.push({ type: "text", text: tileLine(entry) });
    return toolResult(summary(job, structured, budget), structured, more);
  };
  const fits = (count: number, withImage: boolean) =>
    responseTokens(render(count, withImage), budget.model).total <= budget.maxTokens;
  // The sheet first (it is the overview), then as many tiles' words as fit.
  const withImage = image !== null && fits(0, true);
  const fitting = (n: number, cut?: Cut) =>
    responseTokens(render(n, withImage, cut), budget.model).total <= budget.maxTokens;
  const count = mostThatFit(tiles.length - offset, (n) => fitting(n));
  if (count > 0 || offset >= tiles.length) return render(count, withImage);
  // One tile's words alone pass the cap (hours of captions in a span): it comes with as many
  // of its captions as fit, and says how many it left out, so the cursor still moves on.
  const all = cues ? cuesIn(cues, tiles[offset].span).length : 0;
  const withText = fitting(1, { captions: 0, text: true });
  const kept = mostThatFit(all, (n) => fitting(1, { captions: n, text: withText }));
  return render(1, withImage, { captions: kept, text: withText });
}

/** What a tile too large for any answer keeps: its first `captions` cues, and its text or not. */
type Cut = { captions: number; text: boolean };

function tileEntry(tile: Tile, cues: ReturnType<typeof readOurWebVtt> | null, cut?: Cut) {
  const frame = tile.frames[0] as z.infer<typeof FrameSchema>;
  const said = cues ? cuesIn(cues, tile.span) : null;
  const captions = said && cut ? said.slice(0, cut.captions) : said;
  const dropText = cut !== undefined && !cut.text && frame.text != null;
  const leftOut = {
    captions: (said?.length ?? 0) - (captions?.length ?? 0),
    text: dropText,
  };
  return {
    tile: tile.tile,
    time: tile.time,
    label: tile.label,
    frame_index: frame.index,
    pts: frame.pts ?? null,
    x: tile.x,
    y: tile.y,
    span: tile.span,
    ...(captions ? { captions } : {}),
    ...(frame.text !== undefined && !dropText ? { text: frame.text } : {}),
    ...(leftOut.captions > 0 || leftOut.text ? { words_left_out: leftOut } : {}),
  };
}

const secondsText = (value: number) => `${Number(value.toFixed(3))} s`;

/** One tile's words. Captions and text on screen are the video's: quoted as JSON, data to read. */
function tileLine(entry: z.infer<typeof OverviewTileSchema>): string {
  const where = `Tile ${entry.tile} (${entry.label}, frame ${entry.frame_index}; span ${secondsText(entry.span.start)}–${secondsText(entry.span.end)})`;
  const said =
    entry.captions === undefined
      ? ""
      : entry.captions.length > 0
        ? ` captions: ${entry.captions.map((text) => JSON.stringify(text)).join(" ")};`
        : " no captions;";
  const read =
    entry.text === undefined
      ? ""
      : entry.text === null
        ? " text on screen: not read;"
        : entry.text.content === ""
          ? " no text on screen;"
          : ` text on screen: ${JSON.stringify(entry.text.content)};`;
  const cut = entry.words_left_out;
  const left = cut
    ? ` Left out (alone they pass max_tokens): ${[
        cut.captions > 0 ? `${cut.captions} more caption(s), in the job's captions file` : "",
        cut.text ? "the text on screen, in the job's frames[].text" : "",
      ]
        .filter(Boolean)
        .join(" and ")} (get_job).`
    : "";
  return `${where}:${said}${read}`.replace(/;$/, ".").replace(/:$/, ".") + left;
}

function summary(job: Job, overview: Overview, budget: Budget): string {
  const sheet = overview.sheet;
  const video = job.video ? ` ${videoLine(job.video)}` : "";
  const head =
    `Overview of ${secondsText(overview.range.start)}–${secondsText(overview.range.end)} (job ${job.id}, ${job.credits_charged ?? 0} credit(s) charged).${video}` +
    (sheet
      ? ` Contact sheet: ${overview.total_tiles} tiles, ${sheet.columns} to a row (${sheet.tile_width}×${sheet.tile_height} px each), ${sheet.width}×${sheet.height} px, ${sheet.tokens} tokens by the ${budget.model} rule; each tile's time is burned into its foot as hh:mm:ss.mmm. ` +
        (sheet.inline
          ? "It follows as an image."
          : `It is at sheet.url (signed${overview.offset === 0 && !budget.inline ? "; pass inline_images: true to see it here" : ""}): ${sheet.url}`)
      : "");
  const shown = overview.tiles;
  const range =
    shown.length > 0
      ? ` Tiles ${shown[0].tile}–${shown[shown.length - 1].tile} of ${overview.total_tiles}, each with its span:`
      : "";
  const left = overview.omitted
    ? ` Left out of this answer (${overview.omitted.why}): tiles ${rangesText(overview.omitted.tiles)}; call overview with cursor "${overview.next_cursor}" for them.`
    : "";
  const zoom = ` To look closer, call zoom with job_id "${job.id}" and a start and end in seconds.`;
  return `${head}${left}${zoom}${range}`;
}

async function captionCues(
  c: Context<AppEnv>,
  job: Job,
  keys: Map<number, string | null>,
): Promise<ReturnType<typeof readOurWebVtt> | null> {
  if (!(job.options as { captions?: boolean }).captions) return null;
  if (!job.captions) return [];
  const key = siblingKey(keys, "captions.vtt");
  const stored = key ? await c.env.FILES.get(key) : null;
  return stored ? readOurWebVtt(await stored.text()) : [];
}

function sheetGone() {
  return new ApiError("ServiceUnavailable", "The contact sheet's file is gone", {
    userMessage: "We couldn't read the contact sheet right now. Please try again shortly.",
  });
}
