import { createRoute } from "@hono/zod-openapi";
import {
  CreateJobRequestSchema,
  IdempotencyHeadersSchema,
  JobIdParamSchema,
  JobListSchema,
  JobSchema,
  ListJobsQuerySchema,
  WaitQuerySchema,
} from "../../../schema/api.ts";
import { CREATE_JOB_EXAMPLES } from "../../../schema/api-examples.ts";
import { jsonBody } from "../../app.ts";
import { requireApiKey } from "../../middleware/auth.ts";
import { primaryReads, replicaReads } from "../../storage/d1-sessions.ts";
import {
  AUTH_SECURITY,
  BookmarkRequestHeaders,
  bookmarkedResponse,
  errorResponses,
} from "../responses.ts";

/** 500 timestamps of a week-long video, two URLs and the options fit in well under this. */
const CREATE_JOB_BODY_BYTES = 32 * 1024;

export const createJobRoute = createRoute({
  method: "post",
  path: "/jobs",
  tags: ["Jobs"],
  operationId: "createJob",
  summary: "Create a frame extraction job",
  security: AUTH_SECURITY,
  middleware: [requireApiKey, jsonBody(CREATE_JOB_BODY_BYTES)] as const,
  request: {
    query: WaitQuerySchema,
    headers: IdempotencyHeadersSchema,
    body: {
      required: true,
      content: {
        "application/json": { schema: CreateJobRequestSchema, examples: CREATE_JOB_EXAMPLES },
      },
    },
  },
  responses: {
    201: bookmarkedResponse(JobSchema, "The job (with wait=true it may already be finished)"),
    ...errorResponses(400, 401, 402, 429),
  },
});

export const listJobsRoute = createRoute({
  method: "get",
  path: "/jobs",
  tags: ["Jobs"],
  operationId: "listJobs",
  summary: "List jobs, newest first (rows carry no file URLs)",
  security: AUTH_SECURITY,
  middleware: [requireApiKey, replicaReads] as const,
  request: { query: ListJobsQuerySchema, headers: BookmarkRequestHeaders },
  responses: {
    200: bookmarkedResponse(JobListSchema, "A page of jobs"),
    ...errorResponses(400, 401, 429),
  },
});

export const getJobRoute = createRoute({
  method: "get",
  path: "/jobs/{id}",
  tags: ["Jobs"],
  operationId: "getJob",
  summary: "Read a job, with signed frame URLs while it is completed and not expired",
  security: AUTH_SECURITY,
  // A client polls here for its job: read on the primary, never behind (edge/jobs/read.ts).
  middleware: [requireApiKey, primaryReads] as const,
  request: { params: JobIdParamSchema, query: WaitQuerySchema, headers: BookmarkRequestHeaders },
  responses: {
    200: bookmarkedResponse(JobSchema, "The job"),
    ...errorResponses(400, 401, 404, 429),
  },
});
