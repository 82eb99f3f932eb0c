// create_demo and get_demo: the free preview (6 JPG frames, at most 640 px wide), made and read
// by the functions behind POST /v1/demo and GET /v1/demo/{id}, with the same per-IP allowance.
import { z } from "zod";
import { DemoJobSchema, DemoRequestSchema, JobIdParamSchema } from "../../../schema/api.ts";
import { DEMO } from "../../../schema/plans.ts";
import { DEFAULT_SAMPLE, SAMPLE_PATH_PREFIX } from "../../../schema/samples.ts";
import { createDemoJob } from "../../jobs/demo.ts";
import { readDemoJob } from "../../jobs/read.ts";
import { demoCreatorOf, readerOf } from "../../request.ts";
import {
  objectSchema,
  parseArguments,
  restBody,
  restParameter,
  type ToolInput,
} from "../inputs.ts";
import { demoSummary } from "../summaries.ts";
import { defineTool, READS, STARTS_JOBS, toolResult } from "../tool.ts";

export const createDemo = defineTool({
  name: "create_demo",
  title: "Create a free demo preview",
  description:
    `Start a free preview of a video: ${DEMO.frames} evenly spaced JPG frames, at most ${DEMO.max_width} px wide, ` +
    "never charged, limited per address per day (a preview that fails is given back; the answer's allowance says what is left). " +
    "Add animated {start?, duration, fps, width, format} for a looping WebP or GIF preview as well (its URL in animated.url). " +
    "It runs in the background: read it with get_demo, then view_frames. " +
    `The service's own sample video is this MCP server's URL with /mcp replaced by ${SAMPLE_PATH_PREFIX}${DEFAULT_SAMPLE}.`,
  input: {
    json: restBody(DemoRequestSchema) as ToolInput<unknown>["json"],
    parse: (args) => parseArguments(DemoRequestSchema, args),
  },
  output: DemoJobSchema,
  annotations: STARTS_JOBS,
  async run(c, input) {
    const demo = await createDemoJob(demoCreatorOf(c), input.url, input.animated);
    return toolResult(demoSummary(demo), demo);
  },
});

export const getDemo = defineTool({
  name: "get_demo",
  title: "Get a demo preview",
  description: "Read a demo preview made by create_demo: its status and frames.",
  input: {
    json: objectSchema({ demo_id: restParameter("params", JobIdParamSchema, "id") }, ["demo_id"]),
    parse: (args) => parseArguments(z.strictObject({ demo_id: JobIdParamSchema.shape.id }), args),
  },
  output: DemoJobSchema,
  annotations: READS,
  async run(c, input) {
    const demo = await readDemoJob(readerOf(c), input.demo_id);
    return toolResult(demoSummary(demo), demo);
  },
});
