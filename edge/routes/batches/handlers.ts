import type { RouteHandler } from "@hono/zod-openapi";
import { MAX_BATCH_URLS } from "../../../schema/batches.ts";
import { createBatch } from "../../batches/create.ts";
import { listBatches, readBatch } from "../../batches/read.ts";
import { type AppEnv, requesterOf } from "../../context.ts";
import type { createBatchRoute, getBatchRoute, listBatchesRoute } from "./routes.ts";

export const createBatchHandler: RouteHandler<typeof createBatchRoute, AppEnv> = async (c) => {
  const requester = requesterOf(c);
  const { batchId } = await createBatch(
    requester,
    c.req.valid("json"),
    c.req.valid("header")["idempotency-key"],
  );
  const page = { limit: MAX_BATCH_URLS, skip: 0 };
  return c.json(await readBatch(c.env, requester.account.id, batchId, page), 201);
};

export const listBatchesHandler: RouteHandler<typeof listBatchesRoute, AppEnv> = async (c) => {
  return c.json(await listBatches(c.env, c.get("account").id, c.req.valid("query")), 200);
};

export const getBatchHandler: RouteHandler<typeof getBatchRoute, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  return c.json(await readBatch(c.env, c.get("account").id, id, c.req.valid("query")), 200);
};
