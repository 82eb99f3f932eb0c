import { createRoute } from "@hono/zod-openapi";
import { IdempotencyHeadersSchema } from "../../../schema/api.ts";
import {
  BatchIdParamSchema,
  BatchItemsQuerySchema,
  BatchListSchema,
  BatchSchema,
  CreateBatchRequestSchema,
  ListBatchesQuerySchema,
} from "../../../schema/batches.ts";
import { jsonBody } from "../../app.ts";
import { requireApiKey } from "../../middleware/auth.ts";
import { AUTH_SECURITY, errorResponses } from "../responses.ts";

/** 100 links of the longest length a link may have, and a job's options. */
const CREATE_BATCH_BODY_BYTES = 1024 * 1024;

export const createBatchRoute = createRoute({
  method: "post",
  path: "/batches",
  tags: ["Batches"],
  operationId: "createBatch",
  summary: "Create a batch: one job per link, with the same options (guide: /docs/batches)",
  security: AUTH_SECURITY,
  middleware: [requireApiKey, jsonBody(CREATE_BATCH_BODY_BYTES)] as const,
  request: {
    headers: IdempotencyHeadersSchema,
    body: {
      required: true,
      content: {
        "application/json": {
          schema: CreateBatchRequestSchema,
          example: {
            urls: ["https://example.com/talk-1.mp4", "https://example.com/talk-2.mp4"],
            count: 6,
            webhook_url: "https://example.com/hooks/stills",
          },
        },
      },
    },
  },
  responses: {
    201: {
      description: "The batch, with its items' jobs as far as the account has room for them",
      content: { "application/json": { schema: BatchSchema } },
    },
    ...errorResponses(400, 401, 402, 429),
  },
});

export const listBatchesRoute = createRoute({
  method: "get",
  path: "/batches",
  tags: ["Batches"],
  operationId: "listBatches",
  summary: "List batches, newest first (rows carry counts, not items)",
  security: AUTH_SECURITY,
  middleware: [requireApiKey] as const,
  request: { query: ListBatchesQuerySchema },
  responses: {
    200: {
      description: "A page of batches",
      content: { "application/json": { schema: BatchListSchema } },
    },
    ...errorResponses(400, 401, 429),
  },
});

export const getBatchRoute = createRoute({
  method: "get",
  path: "/batches/{id}",
  tags: ["Batches"],
  operationId: "getBatch",
  summary: "Read a batch: its status, counts by status and a page of its items with their job ids",
  security: AUTH_SECURITY,
  middleware: [requireApiKey] as const,
  request: { params: BatchIdParamSchema, query: BatchItemsQuerySchema },
  responses: {
    200: {
      description: "The batch",
      content: { "application/json": { schema: BatchSchema } },
    },
    ...errorResponses(400, 401, 404, 429),
  },
});
