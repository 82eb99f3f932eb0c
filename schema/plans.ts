// Plans and their limits: the one table both the edge and the extractor read.
// Price ↔ name pairing and numbers are DESIGN.md's decisions.

export const PLAN_NAMES = ["free", "starter", "pro", "scale"] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const RESOLUTIONS = [240, 360, 480, 720, 1080, 1440, 2160] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export interface PlanLimits {
  max_video_minutes: number;
  max_frames_per_job: number;
  max_resolution: Resolution;
  max_width: number;
  retention_days: number;
  max_active_jobs: number;
  requests_per_minute: number;
  /** Links one batch may carry (POST /v1/batches, decision 0340). */
  max_batch_items: number;
  /** Batches not yet completed at once. */
  max_active_batches: number;
}

export interface Plan {
  name: PlanName;
  monthly_credits: number;
  price_usd: number;
  limits: PlanLimits;
}

export const PLANS: Record<PlanName, Plan> = {
  free: {
    name: "free",
    monthly_credits: 60,
    price_usd: 0,
    limits: {
      max_video_minutes: 15,
      max_frames_per_job: 300,
      max_resolution: 720,
      max_width: 1280,
      retention_days: 1,
      max_active_jobs: 2,
      requests_per_minute: 30,
      max_batch_items: 10,
      max_active_batches: 1,
    },
  },
  starter: {
    name: "starter",
    monthly_credits: 1500,
    price_usd: 19,
    limits: {
      max_video_minutes: 60,
      max_frames_per_job: 1000,
      max_resolution: 1080,
      max_width: 1920,
      retention_days: 7,
      max_active_jobs: 5,
      requests_per_minute: 120,
      max_batch_items: 50,
      max_active_batches: 3,
    },
  },
  pro: {
    name: "pro",
    monthly_credits: 5000,
    price_usd: 49,
    limits: {
      max_video_minutes: 180,
      max_frames_per_job: 3000,
      max_resolution: 2160,
      max_width: 3840,
      retention_days: 14,
      max_active_jobs: 10,
      requests_per_minute: 300,
      max_batch_items: 100,
      max_active_batches: 5,
    },
  },
  scale: {
    name: "scale",
    monthly_credits: 25000,
    price_usd: 199,
    limits: {
      max_video_minutes: 360,
      max_frames_per_job: 10000,
      max_resolution: 2160,
      max_width: 3840,
      retention_days: 30,
      max_active_jobs: 25,
      requests_per_minute: 1000,
      max_batch_items: 100,
      max_active_batches: 10,
    },
  },
};

/** Credits for interval and count jobs: frames included per started minute, and per extra credit. */
export const FRAMES_INCLUDED_PER_MINUTE = 100;
/** Credits for timestamps, scenes and keyframes jobs: delivered frames per credit. */
export const TIMESTAMP_FRAMES_PER_CREDIT = 10;
/**
 * A repeat of the account's own completed job, within its retention, with the same source and
 * options: served the stored frames, for this many credits (decision 0350).
 */
export const REPEAT_JOB_CREDITS = 0;
/** `text: true`: 1 more credit per this many frames read (started), like timestamps' frames. */
export const TEXT_FRAMES_PER_CREDIT = 10;
/** A storyboard (contact sheet + thumbnail track) is charged as this many delivered frames. */
export const STORYBOARD_FRAMES = 1;

/** A moving preview (`animated`) costs this many credits on top of the job's, whatever its mode. */
export const ANIMATED_CREDITS = 1;

/** The one-time credit pack: added on top of plan credits, never expires. */
export const CREDIT_PACK = { credits: 500, price_usd: 10 } as const;

/** Jobs with more frames than this are always zipped (spec §8). */
export const ZIP_ALWAYS_ABOVE_FRAMES = 300;

/** The demo's fixed shape (spec §4, §8). */
export const DEMO = { frames: 6, max_width: 640, max_seconds: 15 * 60, format: "jpg" } as const;

/** Requests per minute per client IP on the public endpoints (pricing, demo reads). */
export const PUBLIC_REQUESTS_PER_MINUTE = 60;

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

/**
 * The public price list, as GET /v1/pricing, the MCP get_pricing tool and the landing page
 * show it. Built once: it only depends on the tables above.
 */
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
    live: `like interval: 1 credit per started minute of the stream watched (each frame caught counts for the seconds between frames, at most the duration; the latest frame alone is 1 credit), ${FRAMES_INCLUDED_PER_MINUTE} frames per minute included; the whole duration is held up front and the rest released; a stream that stalls fails, free`,
    scenes_and_keyframes: `like timestamps: 1 credit per ${TIMESTAMP_FRAMES_PER_CREDIT} delivered frames`,
    best: `like scenes: 1 credit per ${TIMESTAMP_FRAMES_PER_CREDIT} delivered frames (the scoring pass is free)`,
    slides: `like scenes: 1 credit per ${TIMESTAMP_FRAMES_PER_CREDIT} delivered frames, one per slide shown (the grey pass that finds them is free); with text, the text rule's credit on top`,
    storyboard: `counts as ${STORYBOARD_FRAMES} more delivered frame`,
    animated: `${ANIMATED_CREDITS} credit on top of the job's, in any mode, when the preview is delivered (at most 10 s, 15 fps, 640 px wide); free on the demo`,
    skip: "free: a moved frame is still one frame",
    captions: "free",
    text: `1 more credit per ${TEXT_FRAMES_PER_CREDIT} frames read (started), on top of the job's, in any mode; about 0.3 s of work per 1080p frame and language`,
    video: "free: the video's facts come with every completed job",
    charged: "only when a job completes; failed and demo jobs are free",
    batches:
      "each item of a batch is a job, charged as a job; an item that fails or never becomes a job is free",
    repeats: `a repeat of your own job within retention costs ${REPEAT_JOB_CREDITS} credits: the same source (the same final URL with the same ETag or Last-Modified and size, or the same platform video) and the same options are served the stored frames at new URLs, with reused_from naming the earlier job; reuse: false extracts and charges afresh`,
    order: "plan credits are spent before pack credits",
  },
  zip_always_above_frames: ZIP_ALWAYS_ABOVE_FRAMES,
  demo: {
    frames: DEMO.frames,
    max_width: DEMO.max_width,
    max_video_minutes: DEMO.max_seconds / 60,
  },
};
