// The demo's routes: POST /v1/demo and GET /v1/demo/{id}, public and rate limited by address.
import { createRoute } from "@hono/zod-openapi";
import { DemoJobSchema, DemoRequestSchema, JobIdParamSchema } from "../../../schema/api.ts";
import { jsonBody } from "../../app.ts";
import { publicRate } from "../../middleware/auth.ts";
import { replicaReads } from "../../storage/d1-sessions.ts";
import {
  BookmarkRequestHeaders,
  bookmarkedResponse,
  errorResponses,
  PUBLIC_SECURITY,
} from "../responses.ts";

/** The demo takes one URL: a few KiB is plenty, and it is unauthenticated. */
const DEMO_BODY_BYTES = 4 * 1024;

export const createDemoRoute = createRoute({
  method: "post",
  path: "/demo",
  tags: ["Public"],
  operationId: "createDemo",
  summary: "Create a free preview: 6 evenly spaced JPG frames, at most 640 px wide",
  security: PUBLIC_SECURITY,
  middleware: [publicRate, jsonBody(DEMO_BODY_BYTES)] as const,
  request: {
    body: { required: true, content: { "application/json": { schema: DemoRequestSchema } } },
  },
  responses: {
    201: bookmarkedResponse(DemoJobSchema, "The demo job"),
    ...errorResponses(400, 429),
  },
});

export const getDemoRoute = createRoute({
  method: "get",
  path: "/demo/{id}",
  tags: ["Public"],
  operationId: "getDemo",
  summary: "Read a demo job",
  security: PUBLIC_SECURITY,
  middleware: [publicRate, replicaReads] as const,
  request: { params: JobIdParamSchema, headers: BookmarkRequestHeaders },
  responses: {
    200: bookmarkedResponse(DemoJobSchema, "The demo job"),
    ...errorResponses(404, 429),
  },
});
