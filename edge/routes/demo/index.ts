import { createRoute } from "@hono/zod-openapi";
import { DemoJobSchema, DemoRequestSchema, JobIdParamSchema } from "../../../schema/api.ts";
import { demoJobs } from "../../../schema/db.ts";
import type { JobMessage } from "../../../schema/messages.ts";
import { createRouter } from "../../app.ts";
import { sha256Hex } from "../../crypto.ts";
import { ApiError } from "../../errors.ts";
import { readDemoJob } from "../../jobs/read.ts";
import { publicRate } from "../../middleware/auth.ts";
import { takeDemoAllowance } from "../../middleware/rate-limit.ts";
import { checkSourceUrl } from "../../sources.ts";
import { errorResponses, jsonResponse } from "../responses.ts";

export const createDemoRoute = createRoute({
  method: "post",
  path: "/v1/demo",
  tags: ["Public"],
  operationId: "createDemo",
  summary: "Create a free preview: 6 evenly spaced JPG frames, at most 640 px wide",
  request: {
    body: { required: true, content: { "application/json": { schema: DemoRequestSchema } } },
  },
  responses: {
    201: jsonResponse(DemoJobSchema, "The demo job"),
    ...errorResponses(400, 429),
  },
});

export const getDemoRoute = createRoute({
  method: "get",
  path: "/v1/demo/{id}",
  tags: ["Public"],
  operationId: "getDemo",
  summary: "Read a demo job",
  request: { params: JobIdParamSchema },
  responses: {
    200: jsonResponse(DemoJobSchema, "The demo job"),
    ...errorResponses(400, 404, 429),
  },
});

const router = createRouter();
// "/v1/demo/*" matches "/v1/demo" too: one registration, or every request is counted twice.
router.use("/v1/demo/*", publicRate);

export const demoRouter = router
  .openapi(createDemoRoute, async (c) => {
    const { url } = c.req.valid("json");
    const source = await checkSourceUrl(url, c.env);
    // Counted after the link is accepted, so a typo does not use up the day's allowance.
    const allowance = await takeDemoAllowance(c);
    if (!allowance.allowed) {
      throw new ApiError(
        "DemoLimitReached",
        `The demo allows ${allowance.limit} previews per day from one address`,
        {
          userMessage: "You've used today's free previews. Create a free account to keep going.",
          retryAfter: allowance.retryAfter,
        },
      );
    }
    const id = crypto.randomUUID();
    await c
      .get("db")
      .insert(demoJobs)
      .values({
        id,
        ipHash: await sha256Hex(c.get("clientIp")),
        status: "queued",
        url,
        sourceUrl: source.url,
        platform: source.platform,
      });
    const message: JobMessage = { kind: "demo", id };
    await c.env.JOBS_QUEUE.send(message);
    return c.json(await readDemoJob(c, id), 201);
  })
  .openapi(getDemoRoute, async (c) => c.json(await readDemoJob(c, c.req.valid("param").id), 200));
