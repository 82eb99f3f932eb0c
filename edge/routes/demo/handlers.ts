import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";
import { createDemoJob } from "../../jobs/demo.ts";
import { readDemoJob } from "../../jobs/read.ts";
import { demoCreatorOf, readerOf } from "../../request.ts";
import { readAfterWrite } from "../../storage/d1-sessions.ts";
import type { createDemoRoute, getDemoRoute } from "./routes.ts";

export const createDemoHandler: RouteHandler<typeof createDemoRoute, AppEnv> = async (c) => {
  // The demo is written and read back through a session that starts on the primary, so the
  // answer's X-D1-Bookmark covers it.
  readAfterWrite(c);
  const { url, animated } = c.req.valid("json");
  return c.json(await createDemoJob(demoCreatorOf(c), url, animated), 201);
};

export const getDemoHandler: RouteHandler<typeof getDemoRoute, AppEnv> = async (c) =>
  c.json(await readDemoJob(readerOf(c), c.req.valid("param").id), 200);
