// The create-job request's named examples, one per way of asking for frames. They are shown in
// the OpenAPI document (and so in /docs, whose "Test Request" sends the first as it stands),
// and test/e2e/api-examples.test.ts posts every one to the real stack: each must be valid and
// complete on the sample video the service serves itself (a 30 s 720p clip with scene cuts).
import type { CreateJobRequest } from "./api.ts";

/**
 * Stands for the service's public origin in the document's examples; the edge writes its own
 * origin there when it serves the document (edge/routes/docs/handlers.ts).
 */
export const PUBLIC_BASE_URL_TOKEN = "{PUBLIC_BASE_URL}";

/** The sample every example uses, under the service's own origin. */
export const SAMPLE_VIDEO_PATH = "/samples/intro.mp4";
const SAMPLE_URL = `${PUBLIC_BASE_URL_TOKEN}${SAMPLE_VIDEO_PATH}`;

type Example = { summary: string; description?: string; value: CreateJobRequest };

export const CREATE_JOB_EXAMPLES = {
  count: {
    summary: "count: 6 frames spread evenly",
    value: { url: SAMPLE_URL, count: 6 },
  },
  interval: {
    summary: "interval: a frame every 5 seconds",
    value: { url: SAMPLE_URL, every: 5 },
  },
  timestamps: {
    summary: "timestamps: frames at exact moments",
    value: { url: SAMPLE_URL, timestamps: [1, 7.5, 15, 28] },
  },
  range: {
    summary: "range: a frame every 2 seconds between 10 s and 20 s",
    value: { url: SAMPLE_URL, every: 2, start: 10, end: 20 },
  },
  scenes: {
    summary: "scenes: one frame per shot, at most 8",
    value: { url: SAMPLE_URL, mode: "scenes", count: 8 },
  },
  keyframes: {
    summary: "keyframes: the stream's own keyframes, at most 10",
    value: { url: SAMPLE_URL, mode: "keyframes", count: 10 },
  },
  storyboard: {
    summary: "storyboard: 12 frames with a contact sheet and a thumbnail track",
    value: { url: SAMPLE_URL, count: 12, storyboard: true },
  },
  best: {
    summary: "best: the 3 best-looking frames, best first, each with its score",
    value: { url: SAMPLE_URL, mode: "best", count: 3 },
  },
  slides: {
    summary: "slides: one frame each time the picture settles, with when each slide is on screen",
    value: { url: SAMPLE_URL, mode: "slides" },
  },
  animated: {
    summary: "animated: 6 frames and a 4 s looping WebP preview at 10 fps, 320 px wide",
    value: {
      url: SAMPLE_URL,
      count: 6,
      animated: { start: 5, duration: 4, fps: 10, width: 320, format: "webp" },
    },
  },
  zip: {
    summary: "zip: 10 PNG frames at 480p in one ZIP archive",
    value: { url: SAMPLE_URL, count: 10, format: "png", resolution: 480, output: "zip" },
  },
  budget: {
    summary:
      "budget: as many frames as fit 4,000 of a Claude model's input tokens, at a legible size",
    value: { url: SAMPLE_URL, budget: { tokens: 4000, model: "claude" } },
  },
} satisfies Record<string, Example>;

export type CreateJobExampleName = keyof typeof CREATE_JOB_EXAMPLES;
