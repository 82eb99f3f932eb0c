// Batches (POST /v1/batches, issue 40, decision 0340): many links, one set of job options. The
// options are the job request's own fields (CreateJobRequestSchema without `url` and `wait`),
// checked by the same rules between fields, so a batch takes exactly what a job takes.
import { z } from "@hono/zod-openapi";
import {
  CreateJobRequestSchema,
  checkCombinations,
  isPlainObject,
  JobErrorSchema,
  MAX_URL_LENGTH,
  queryInteger,
} from "./api.ts";

/** The most links one batch carries on any plan; each plan has its own `max_batch_items`. */
export const MAX_BATCH_URLS = 100;

/** The job options a batch's items share: the job request's fields but its link and `wait`. */
const { url: _url, wait: _wait, ...JOB_OPTION_FIELDS } = CreateJobRequestSchema.shape;

export const CreateBatchRequestSchema = z
  .strictObject({
    urls: z
      .array(z.string().min(1).max(MAX_URL_LENGTH))
      .min(1)
      .max(MAX_BATCH_URLS)
      .optional()
      .openapi({
        description: `The links, one job each, in this order (at most ${MAX_BATCH_URLS}, and at most the plan's max_batch_items). A link that is not a supported public video becomes a failed item; the others still run. An HLS master playlist is one video: one item. Send urls or url, not both`,
        example: ["https://example.com/a.mp4", "https://example.com/b.mp4"],
      }),
    url: z.string().min(1).max(MAX_URL_LENGTH).optional().openapi({
      format: "uri",
      description:
        "Instead of urls: one playlist or channel link, expanded into its videos (one item each, in the list's order). A longer list than the plan's max_batch_items is truncated to its first max_batch_items videos, and the batch's playlist.note says so. A link to one video (an HLS or DASH master playlist too) is a batch of one item",
    }),
    ...JOB_OPTION_FIELDS,
  })
  .superRefine(
    (body, ctx) => {
      if (body.url !== undefined && body.urls !== undefined) {
        ctx.addIssue({
          code: "custom",
          message:
            "send either urls (a list of links) or url (one playlist or channel link), not both",
          path: ["url"],
        });
      } else if (body.url === undefined && body.urls === undefined) {
        ctx.addIssue({
          code: "custom",
          message: "urls (a list of links) or url (one playlist or channel link) is required",
          path: ["urls"],
        });
      }
      checkCombinations(body, ctx);
    },
    { when: (payload) => isPlainObject(payload.value) },
  )
  .openapi("CreateBatchRequest", {
    // urls or url, one of them: said in the document as well (required names no field alone).
    anyOf: [
      {
        type: "object",
        required: ["urls"],
        properties: {
          urls: { type: "array", minItems: 1, items: { type: "string", minLength: 1 } },
        },
      },
      {
        type: "object",
        required: ["url"],
        properties: { url: { type: "string", format: "uri" } },
      },
    ],
  });
export type CreateBatchRequest = z.infer<typeof CreateBatchRequestSchema>;

/** A batch as the API shows it: queued until an item's job starts, completed once all ended. */
export const BATCH_STATUSES = ["queued", "running", "completed"] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * An item's status: its job's, or `pending` while it waits for room among the account's
 * active jobs (max_active_jobs), or `failed` when it never became a job.
 */
export const BATCH_ITEM_STATUSES = [
  "pending",
  "queued",
  "processing",
  "completed",
  "failed",
  "expired",
] as const;
export type BatchItemStatus = (typeof BATCH_ITEM_STATUSES)[number];

export const BatchItemSchema = z
  .object({
    index: z.number().int().openapi({ description: "Its place in urls, from 1" }),
    url: z.string(),
    status: z.enum(BATCH_ITEM_STATUSES),
    job_id: z.uuid().nullable().openapi({
      description:
        "The item's job (GET /v1/jobs/{id}); null while pending or when it never became one",
    }),
    error: JobErrorSchema.nullable().openapi({
      description: "Why the item failed: its job's error, or why it never became a job",
    }),
  })
  .openapi("BatchItem");
export type BatchItem = z.infer<typeof BatchItemSchema>;

export const BatchCountsSchema = z
  .object({
    total: z.number().int(),
    pending: z.number().int(),
    queued: z.number().int(),
    processing: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    expired: z.number().int(),
  })
  .openapi("BatchCounts", { description: "How many items are in each status" });
export type BatchCounts = z.infer<typeof BatchCountsSchema>;

/** A batch made of one playlist or channel link: what the link expanded to. */
export const BatchPlaylistSchema = z
  .object({
    url: z.string().openapi({ description: "The link the batch was made of" }),
    title: z.string().nullable().openapi({ description: "The list's title, as the site gives it" }),
    items: z.number().int().openapi({ description: "Items the link gave" }),
    truncated: z.boolean().openapi({
      description:
        "The list has more videos than the plan's max_batch_items: only its first max_batch_items became items",
    }),
    note: z.string().nullable().openapi({
      description: "What happened to the link, in plain words (a truncated list, a single video)",
    }),
  })
  .openapi("BatchPlaylist");
export type BatchPlaylist = z.infer<typeof BatchPlaylistSchema>;

export const BatchSummarySchema = z
  .object({
    id: z.uuid(),
    object: z.literal("batch"),
    status: z.enum(BATCH_STATUSES),
    options: z.record(z.string(), z.unknown()).openapi({
      description: "The job options every item takes",
    }),
    counts: BatchCountsSchema,
    credits_charged: z.number().int().openapi({
      description: "The sum charged for the items' jobs so far (each is charged as a job)",
    }),
    playlist: BatchPlaylistSchema.nullable().openapi({
      description: "For a batch made of one link (url): what it expanded to; null for urls",
    }),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
  })
  .openapi("BatchSummary");
export type BatchSummary = z.infer<typeof BatchSummarySchema>;

export const BatchItemPageSchema = z
  .object({
    total: z.number().int(),
    limit: z.number().int(),
    skip: z.number().int(),
    data: z.array(BatchItemSchema),
  })
  .openapi("BatchItemPage");

export const BatchSchema = BatchSummarySchema.extend({ items: BatchItemPageSchema }).openapi(
  "Batch",
);
export type Batch = z.infer<typeof BatchSchema>;

export const BatchListSchema = z
  .object({
    total: z.number().int(),
    limit: z.number().int(),
    skip: z.number().int(),
    data: z.array(BatchSummarySchema),
  })
  .openapi("BatchList");

/** GET /v1/batches/{id}: a page of its items. */
export const BatchItemsQuerySchema = z.object({
  limit: queryInteger(1, MAX_BATCH_URLS, MAX_BATCH_URLS),
  skip: queryInteger(0, MAX_BATCH_URLS, 0),
});

export const ListBatchesQuerySchema = z.object({
  limit: queryInteger(1, 100, 20),
  skip: queryInteger(0, 1_000_000_000 - 1, 0),
});

/**
 * The webhooks-queue message of a batch's end (edge/batches/lifecycle.ts queues it once). The
 * queue carries it beside the job and test events (schema/webhook-deliveries.ts).
 */
export const BatchCompletedMessageSchema = z.object({
  event_id: z.string(),
  type: z.literal("batch.completed"),
  batch_id: z.string(),
  resend: z.boolean().optional(),
});
export type BatchCompletedMessage = z.infer<typeof BatchCompletedMessageSchema>;

export const BatchIdParamSchema = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
});
