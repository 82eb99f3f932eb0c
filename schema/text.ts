// Text on screen (issue 38, decision 0262): the languages a job may ask for and the shape of
// what is read on each frame. One definition for the request (schema/api.ts), the extractor's
// result (schema/messages.ts) and the engine (extractor/text/ocr.ts).
import { z } from "@hono/zod-openapi";

/** BCP 47 language → Tesseract's traineddata name, for the languages Debian packages. */
export const TESSERACT_LANGUAGES: Record<string, string> = {
  en: "eng",
  de: "deu",
  fr: "fra",
  es: "spa",
  it: "ita",
  pt: "por",
  nl: "nld",
  pl: "pol",
  sv: "swe",
  da: "dan",
  nb: "nor",
  fi: "fin",
  cs: "ces",
  tr: "tur",
  ru: "rus",
  uk: "ukr",
  el: "ell",
  ar: "ara",
  he: "heb",
  hi: "hin",
  ja: "jpn",
  ko: "kor",
  "zh-Hans": "chi_sim",
  "zh-Hant": "chi_tra",
  vi: "vie",
  id: "ind",
  th: "tha",
};

export const TEXT_LANGUAGE_TAGS = Object.keys(TESSERACT_LANGUAGES) as [string, ...string[]];
export const DEFAULT_TEXT_LANGUAGES = ["en"];
/** At most this many languages per job: each one adds to every frame's time. */
export const MAX_TEXT_LANGUAGES = 3;
/** Longest text kept for one frame; a frame of dense text is cut here. */
export const MAX_TEXT_CHARS = 4000;
/**
 * Most characters of text one job keeps over all its frames, so a result of many frames of
 * dense text stays well inside the result's 16 MiB body: a frame keeps at most this over the
 * job's frames (never under MIN_FRAME_TEXT_CHARS, never over MAX_TEXT_CHARS).
 */
export const MAX_JOB_TEXT_CHARS = 2_000_000;
export const MIN_FRAME_TEXT_CHARS = 200;

/** The most characters each frame's text keeps in a job of `frames` frames. */
export function frameTextChars(frames: number): number {
  const share = Math.floor(MAX_JOB_TEXT_CHARS / Math.max(1, frames));
  return Math.max(MIN_FRAME_TEXT_CHARS, Math.min(MAX_TEXT_CHARS, share));
}

export const FrameTextSchema = z
  .object({
    content: z.string().max(MAX_TEXT_CHARS).openapi({
      description:
        'The words read, line by line, a blank line between blocks; "" when the frame shows no text',
    }),
    confidence: z.number().min(0).max(1).openapi({
      description: "The words' mean confidence, weighted by their length, 0 to 1 (0 when empty)",
    }),
    language: z
      .string()
      .max(64)
      .openapi({ description: 'The languages read with, as asked, joined by "+" (e.g. "en")' }),
  })
  .openapi("FrameText");
export type FrameText = z.infer<typeof FrameTextSchema>;
