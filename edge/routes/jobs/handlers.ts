import type { RouteHandler } from "@hono/zod-openapi";
import { type AppEnv, requesterOf } from "../../context.ts";
import { createJob } from "../../jobs/create.ts";
import { listJobs, readJob } from "../../jobs/read.ts";
import { accountReaderOf } from "../../request.ts";
import { readAfterWrite } from "../../storage/d1-sessions.ts";
import type { createJobRoute, getJobRoute, listJobsRoute } from "./routes.ts";

export const createJobHandler: RouteHandler<typeof createJobRoute, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  const query = c.req.valid("query");
  const { jobId } = await createJob(requesterOf(c), body, c.req.valid("header")["idempotency-key"]);
  const wait = query.wait ?? body.wait ?? false;
  // Read back on the primary, so the answer's X-D1-Bookmark covers the new job: a client
  // that sends it with its next reads reads its own write on any replica.
  readAfterWrite(c);
  return c.json(await readJob(accountReaderOf(c), jobId, wait), 201);
};

export const listJobsHandler: RouteHandler<typeof listJobsRoute, AppEnv> = async (c) => {
  return c.json(await listJobs(accountReaderOf(c), c.req.valid("query")), 200);
};

export const getJobHandler: RouteHandler<typeof getJobRoute, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  return c.json(await readJob(accountReaderOf(c), id, c.req.valid("query").wait ?? false), 200);
};
