// The batch tools: create_batch (POST /v1/batches), get_batch (GET /v1/batches/{id}) and
// list_batches (GET /v1/batches). They call the same functions as the REST handlers, inside the
// caller's request: the same plan limits, items fed as the account has room, one job per item
// charged as a job, and the batch.completed webhook (decision 0340). A batch is not waited for:
// its items' jobs are read with get_job and view_frames, as any job is.
import { z } from "zod";
import { IdempotencyHeadersSchema } from "../../../schema/api.ts";
import {
  type Batch,
  BatchIdParamSchema,
  BatchItemsQuerySchema,
  BatchListSchema,
  BatchSchema,
  type BatchSummary,
  type CreateBatchRequest,
  CreateBatchRequestSchema,
  ListBatchesQuerySchema,
  MAX_BATCH_URLS,
} from "../../../schema/batches.ts";
import { createBatch } from "../../batches/create.ts";
import { listBatches, readBatch } from "../../batches/read.ts";
import { requesterOf } from "../../context.ts";
import { cappedRows } from "../capped-job.ts";
import {
  asQueryValues,
  idempotencyKeyArgument,
  type JsonSchema,
  objectSchema,
  parseArguments,
  restBody,
  restParameter,
  restQueryInput,
  type ToolInput,
} from "../inputs.ts";
import { defineTool, READS, STARTS_JOBS, toolResult } from "../tool.ts";

const CreateOptions = z.strictObject({
  idempotency_key: IdempotencyHeadersSchema.shape["idempotency-key"],
});

// The REST body as documented (urls or url, and the job options every item takes), plus the
// Idempotency-Key header as an argument.
function createBatchInput(): ToolInput<{ body: CreateBatchRequest; idempotencyKey?: string }> {
  const { properties } = restBody(CreateBatchRequestSchema) as {
    properties: Record<string, JsonSchema>;
  };
  return {
    json: objectSchema({
      ...properties,
      idempotency_key: idempotencyKeyArgument("batch"),
    }),
    parse({ idempotency_key, ...fields }) {
      const options = parseArguments(CreateOptions, { idempotency_key });
      // The REST body schema, with its rules across fields (urls or url, count with timestamps…).
      return {
        body: parseArguments(CreateBatchRequestSchema, fields),
        idempotencyKey: options.idempotency_key,
      };
    },
  };
}

function countsLine(batch: BatchSummary): string {
  const { counts } = batch;
  const parts = (["completed", "failed", "processing", "queued", "pending", "expired"] as const)
    .filter((state) => counts[state] > 0)
    .map((state) => `${counts[state]} ${state}`);
  return `${parts.join(", ") || "no items"} of ${counts.total}; ${batch.credits_charged} credit(s) charged so far`;
}

function itemLine(item: Batch["items"]["data"][number]): string {
  const job = item.job_id ? ` job ${item.job_id}` : "";
  const error = item.error ? ` (${item.error.name}: ${item.error.userMessage})` : "";
  return `- ${item.index}. ${item.status}${job}${error}: ${item.url}`;
}

/** The batch with its page of items, cut to the token cap; the rest named with their skip. */
function batchAnswer(batch: Batch, opening: string) {
  const { items } = batch;
  return cappedRows(
    items.data,
    items.skip,
    (data, note) => {
      const shown =
        data.length > 0
          ? `\nItems ${items.skip + 1}–${items.skip + data.length} of ${items.total}:${note}\n${data.map(itemLine).join("\n")}`
          : "";
      const next =
        batch.status === "completed"
          ? " Each item's frames: get_job or view_frames with its job_id."
          : ` Call get_batch with batch_id "${batch.id}" to follow it; each item's frames: get_job or view_frames with its job_id.`;
      return toolResult(`${opening} ${countsLine(batch)}.${next}${shown}`, {
        ...batch,
        items: { ...items, data },
      });
    },
    {
      noun: "items",
      next: (skip) => `call get_batch with batch_id "${batch.id}" and skip ${skip}`,
    },
  );
}

export const createBatchTool = defineTool({
  name: "create_batch",
  title: "Extract frames from many videos",
  description:
    `Create a batch: up to ${MAX_BATCH_URLS} video links (urls, at most the plan's max_batch_items), or one playlist or channel link (url) expanded into its videos, ` +
    "each becoming one ordinary frame extraction job with the same options as extract_frames (mode, format, resolution, captions, text…). " +
    "Items start as the account has room (its max_active_jobs); a link that is not a supported public video is a failed item, uncharged, and the others still run. " +
    "Returns at once with the batch's id and items; follow it with get_batch, and read each item's frames with get_job or view_frames. " +
    "Each item's job costs credits exactly as extract_frames would; failed jobs are free.",
  input: createBatchInput(),
  output: BatchSchema,
  annotations: STARTS_JOBS,
  async run(c, { body, idempotencyKey }) {
    const requester = requesterOf(c);
    const { batchId } = await createBatch(requester, body, idempotencyKey);
    const batch = await readBatch(c.env, requester.account.id, batchId, {
      limit: MAX_BATCH_URLS,
      skip: 0,
    });
    return batchAnswer(batch, `Batch ${batch.id} created, ${batch.status}:`);
  },
});

export const getBatchTool = defineTool({
  name: "get_batch",
  title: "Get a batch",
  description:
    "Read one batch of this account: its status (queued, running, completed), counts, credits charged so far and a page of its items " +
    "(limit, skip), each with its status, its job_id once it became a job, and why it failed. Read an item's frames with get_job or view_frames.",
  input: {
    json: objectSchema(
      {
        batch_id: restParameter("params", BatchIdParamSchema, "id"),
        limit: restParameter("query", BatchItemsQuerySchema, "limit"),
        skip: restParameter("query", BatchItemsQuerySchema, "skip"),
      },
      ["batch_id"],
    ),
    parse: ({ batch_id, ...page }) => ({
      ...parseArguments(z.strictObject({ batch_id: BatchIdParamSchema.shape.id }), { batch_id }),
      ...parseArguments(BatchItemsQuerySchema.strict(), asQueryValues(page)),
    }),
  },
  output: BatchSchema,
  annotations: READS,
  async run(c, { batch_id, limit, skip }) {
    const batch = await readBatch(c.env, c.get("account").id, batch_id, { limit, skip });
    return batchAnswer(batch, `Batch ${batch.id} ${batch.status}:`);
  },
});

export const listBatchesTool = defineTool({
  name: "list_batches",
  title: "List batches",
  description:
    "List this account's batches, newest first, with paging (limit, skip): each one's status, counts and credits charged. " +
    "Read one batch's items with get_batch.",
  input: restQueryInput(ListBatchesQuerySchema, ["limit", "skip"]),
  output: BatchListSchema,
  annotations: READS,
  async run(c, input) {
    const list = await listBatches(c.env, c.get("account").id, input);
    return cappedRows(
      list.data,
      list.skip,
      (data, note) => {
        const rows = data.map(
          (batch) => `- ${batch.id} ${batch.status}: ${countsLine(batch)}, ${batch.created_at}`,
        );
        const shown = `Batches ${list.skip + 1}–${list.skip + data.length} of ${list.total}`;
        const text =
          data.length > 0
            ? `${shown}:${note}\n${rows.join("\n")}`
            : `No batches (of ${list.total}).`;
        return toolResult(text, { ...list, data });
      },
      { noun: "batches", next: (skip) => `call list_batches with skip ${skip}` },
    );
  },
});
