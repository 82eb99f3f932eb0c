// create_demo and get_demo: the free preview (6 JPG frames, at most 640 px wide), exactly as
// POST /v1/demo and GET /v1/demo/{id} answer it, with the same per-IP daily allowance.
import { z } from "zod";
import { DemoJobSchema, DemoRequestSchema, JobIdParamSchema } from "../../../schema/api.ts";
import { DEMO } from "../../../schema/plans.ts";
import { readDemoJob } from "../../jobs/read.ts";
import { callRest } from "../rest.ts";
import { demoSummary } from "../summaries.ts";
import { defineTool, toolResult } from "../tool.ts";

type DemoJob = z.infer<typeof DemoJobSchema>;

export const createDemo = defineTool({
  name: "create_demo",
  title: "Create a free demo preview",
  description:
    `Start a free preview of a video: ${DEMO.frames} evenly spaced JPG frames, at most ${DEMO.max_width} px wide, ` +
    "never charged, limited per address per day. It runs in the background: read it with get_demo, then view_frames.",
  input: DemoRequestSchema,
  output: DemoJobSchema,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  },
  async run(c, input) {
    const demo = await callRest<DemoJob>(c, "POST", "/v1/demo", input);
    return toolResult(demoSummary(demo), demo);
  },
});

export const getDemo = defineTool({
  name: "get_demo",
  title: "Get a demo preview",
  description: "Read a demo preview made by create_demo: its status and frames.",
  input: z.strictObject({ demo_id: JobIdParamSchema.shape.id }),
  output: DemoJobSchema,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(c, input) {
    const demo = await readDemoJob(c, input.demo_id);
    return toolResult(demoSummary(demo), demo);
  },
});
