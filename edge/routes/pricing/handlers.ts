import type { RouteHandler } from "@hono/zod-openapi";
import {
  FRAMES_INCLUDED_PER_MINUTE,
  STORYBOARD_FRAMES,
  TIMESTAMP_FRAMES_PER_CREDIT,
} from "../../../schema/billing.ts";
import { CREDIT_PACK, DEMO, PLANS, ZIP_ALWAYS_ABOVE_FRAMES } from "../../../schema/plans.ts";
import type { AppEnv } from "../../context.ts";
import type { getPricingRoute } from "./routes.ts";

/** Built once: it only depends on the plan table. */
export const CATALOG = {
  object: "pricing",
  currency: "usd",
  plans: Object.values(PLANS).map((plan) => ({
    name: plan.name,
    price_usd: plan.price_usd,
    interval: "month",
    credits_per_month: plan.monthly_credits,
    limits: plan.limits,
  })),
  packs: [
    {
      name: "pack",
      price_usd: CREDIT_PACK.price_usd,
      credits: CREDIT_PACK.credits,
      expires: false,
    },
  ],
  credit_rules: {
    interval_and_count: `1 credit per started minute of processed video, ${FRAMES_INCLUDED_PER_MINUTE} frames per minute included, 1 credit per further ${FRAMES_INCLUDED_PER_MINUTE} frames`,
    timestamps: `1 credit per ${TIMESTAMP_FRAMES_PER_CREDIT} frames`,
    scenes_and_keyframes: `like timestamps: 1 credit per ${TIMESTAMP_FRAMES_PER_CREDIT} delivered frames`,
    storyboard: `counts as ${STORYBOARD_FRAMES} more delivered frame`,
    skip: "free: a moved frame is still one frame",
    captions: "free",
    video: "free: the video's facts come with every completed job",
    charged: "only when a job completes; failed and demo jobs are free",
    order: "plan credits are spent before pack credits",
  },
  zip_always_above_frames: ZIP_ALWAYS_ABOVE_FRAMES,
  demo: {
    frames: DEMO.frames,
    max_width: DEMO.max_width,
    max_video_minutes: DEMO.max_seconds / 60,
  },
};

// The MCP get_pricing tool serves the same CATALOG (edge/mcp/tools/account.ts).
export const getPricingHandler: RouteHandler<typeof getPricingRoute, AppEnv> = (c) =>
  c.json(CATALOG, 200);
