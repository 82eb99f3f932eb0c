// What a tool response costs a model, by one documented rule (decision 0321), so the skimming
// tools (overview, zoom) keep every answer under a cap and name what they left out.
//
// - Text: every text block AND the structured content as JSON, ceil(UTF-8 bytes / 3) tokens.
//   Clients differ in what they hand the model (some give it structuredContent as text as well
//   as the text blocks: claude-code#70280), so both count. Three bytes a token is below what
//   Claude's and GPT's tokenizers average on English (about four) and on JSON with ids and URLs.
// - Images: each inline image by its model family's published rule (schema/image-tokens.ts,
//   decision 0310) at the image's own pixel size, read from the JPEG's bytes.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  IMAGE_TOKEN_MODELS,
  type ImageTokenModel,
  imageTokens,
} from "../../schema/image-tokens.ts";
import { jpegSize } from "./jpeg.ts";

/** Default cap: well under the 25,000 tokens at which Claude Code refuses a tool's answer. */
export const DEFAULT_MAX_TOKENS = 15_000;
export const MIN_MAX_TOKENS = 5_000;
export const MAX_MAX_TOKENS = 24_000;
export const TEXT_BYTES_PER_TOKEN = 3;
/** Unknown clients: the most any known family charges for a picture (schema/image-tokens.ts). */
export const DEFAULT_TOKEN_MODEL: ImageTokenModel = "generic";

/** The inputs every skimming tool shares: its cap and whose rule counts the images. */
export const BudgetOptions = z.object({
  max_tokens: z
    .number()
    .int()
    .min(MIN_MAX_TOKENS)
    .max(MAX_MAX_TOKENS)
    .optional()
    .describe(
      `Most tokens this answer may cost (text, structured content and inline images, counted as decision 0321 says); default ${DEFAULT_MAX_TOKENS}. What does not fit is named, with a cursor`,
    ),
  model: z
    .enum(IMAGE_TOKEN_MODELS)
    .optional()
    .describe(
      `Whose published image-token rule counts inline images; default ${DEFAULT_TOKEN_MODEL} (the most of claude, gpt and gemini)`,
    ),
  inline_images: z
    .boolean()
    .optional()
    .describe(
      "Return images inline (MCP image content). Default false: signed URLs, pixel sizes and token costs only",
    ),
});
export type Budget = { maxTokens: number; model: ImageTokenModel; inline: boolean };

export function budgetOf(input: z.output<typeof BudgetOptions>): Budget {
  return {
    maxTokens: input.max_tokens ?? DEFAULT_MAX_TOKENS,
    model: input.model ?? DEFAULT_TOKEN_MODEL,
    inline: input.inline_images ?? false,
  };
}

const encoder = new TextEncoder();

export function textTokens(text: string): number {
  return Math.ceil(encoder.encode(text).length / TEXT_BYTES_PER_TOKEN);
}

export interface ResponseTokens {
  text: number;
  images: number;
  total: number;
}

/** What this answer costs the model by the rule above. */
export function responseTokens(result: CallToolResult, model: ImageTokenModel): ResponseTokens {
  let text = result.structuredContent ? textTokens(JSON.stringify(result.structuredContent)) : 0;
  let images = 0;
  for (const block of result.content) {
    if (block.type === "text") text += textTokens(block.text);
    if (block.type === "image") images += imageTokensOfBase64(block.data, model);
  }
  return { text, images, total: text + images };
}

function imageTokensOfBase64(data: string, model: ImageTokenModel): number {
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const size = jpegSize(bytes);
  // An image we cannot measure is counted as the largest any rule reads (about 1,600).
  return imageTokens(model, size ?? { width: 4096, height: 4096 });
}

/**
 * The most leading items whose answer fits the cap: `fits(n)` says whether the answer with the
 * first n items does. Answers grow with n, so this searches by halves.
 */
export function mostThatFit(total: number, fits: (n: number) => boolean): number {
  let low = 0;
  let high = total;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** Ranges of 1-based indexes, "3–7, 9", for naming what an answer left out. */
export function indexRanges(indexes: number[]): { from: number; to: number }[] {
  const ranges: { from: number; to: number }[] = [];
  for (const index of [...indexes].sort((a, b) => a - b)) {
    const last = ranges[ranges.length - 1];
    if (last && index === last.to + 1) last.to = index;
    else ranges.push({ from: index, to: index });
  }
  return ranges;
}

export function rangesText(ranges: { from: number; to: number }[]): string {
  return ranges.map((r) => (r.from === r.to ? `${r.from}` : `${r.from}–${r.to}`)).join(", ");
}

/** A cursor names its tool, its job and where to go on, so it works for that tool and job only. */
export function encodeSkimCursor(tool: "overview" | "zoom", jobId: string, offset: number) {
  return btoa(`${tool}:${jobId}/${offset}`)
    .replace(/=+$/, "")
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
}

export function decodeSkimCursor(
  tool: "overview" | "zoom",
  cursor: string,
): { jobId: string; offset: number } | null {
  let decoded = "";
  try {
    decoded = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return null;
  }
  const match = /^(overview|zoom):([0-9a-f-]{36})\/(\d{1,6})$/.exec(decoded);
  if (!match || match[1] !== tool) return null;
  return { jobId: match[2], offset: Number(match[3]) };
}
