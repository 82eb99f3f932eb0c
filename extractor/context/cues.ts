// Caption cues as data: parsed from WebVTT or SRT text that strangers wrote (a platform's file,
// or what ffmpeg converted from a file's own track), stripped of every markup, bounded in size
// and count, and written back out as a WebVTT file of our own. Nothing of the original bytes
// passes through verbatim, so a hostile file cannot smuggle markup or scripts to our users.
import { MAX_CAPTION_CHARS } from "../../schema/api.ts";

export interface Cue {
  /** Seconds on the frames' clock (from the video's first frame); end is exclusive. */
  start: number;
  end: number;
  text: string;
}

/** A subtitle file we refuse to use; the job keeps its frames and says why in its notice. */
export class CaptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CaptionsError";
  }
}

/** More than any real subtitle file of a long video (a cue every second for 5 hours is 18k). */
export const MAX_CUES = 20_000;
/** Larger than any real subtitle file; what a platform download or ffmpeg's output may be. */
export const MAX_SUBTITLE_BYTES = 2 * 1024 * 1024;

/** Strict UTF-8 (a BOM is dropped): text in another encoding would become mojibake as data. */
export function decodeSubtitleBytes(bytes: Uint8Array): string {
  if (bytes.byteLength > MAX_SUBTITLE_BYTES) {
    throw new CaptionsError(`the subtitle file is larger than ${MAX_SUBTITLE_BYTES} bytes`);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new CaptionsError("the subtitle file is not valid UTF-8");
  }
}

const TIMING =
  /^\s*((?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,3})\s+-->\s+((?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,3})(?:\s.*)?$/;

/**
 * Cues of a WebVTT or SRT file, times shifted by `offset` seconds (subtracted), sorted by start.
 * Cues that end before the video starts are dropped; cues that start after `lastSecond` too
 * (a time in the year 3000 is no reason to lose the rest). Throws CaptionsError on too many.
 */
export function parseCues(text: string, offset = 0, lastSecond = Number.POSITIVE_INFINITY): Cue[] {
  const cues: Cue[] = [];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let parsed = 0;
  for (let i = 0; i < lines.length; i += 1) {
    const timing = TIMING.exec(lines[i]);
    if (!timing) continue;
    parsed += 1;
    if (parsed > MAX_CUES) throw new CaptionsError(`the subtitle file has over ${MAX_CUES} cues`);
    const body: string[] = [];
    let charsRead = 0;
    for (i += 1; i < lines.length; i += 1) {
      // A blank line ends the cue; YouTube's automatic captions open each cue with a line of
      // one space, which is not an end while nothing has been read yet.
      if (lines[i].trim() === "" && (lines[i] === "" || body.length > 0)) break;
      if (lines[i].trim() === "") continue;
      // A giant cue is read only as far as a caption can show.
      if (charsRead <= MAX_CAPTION_CHARS * 4) body.push(lines[i]);
      charsRead += lines[i].length;
    }
    const start = parseTime(timing[1]) - offset;
    const end = parseTime(timing[2]) - offset;
    if (!(end > start) || end <= 0 || start > lastSecond) continue;
    const cueText = plainText(body.join("\n"));
    if (cueText) cues.push({ start: Math.max(0, start), end, text: cueText });
  }
  return cues.sort((a, b) => a.start - b.start || a.end - b.end);
}

function parseTime(text: string): number {
  const parts = text.replace(",", ".").split(":").map(Number);
  return parts.reduce((total, part) => total * 60 + part, 0);
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  lrm: "",
  rlm: "",
};

/** Caption text as plain data: no tags, no ASS overrides, no control characters, capped. */
export function plainText(raw: string): string {
  const text = raw
    .replace(/<[^>\n]*>/g, "") // WebVTT <c>, <v Name>, <00:00:01.000>, SRT <i>, <font …>
    .replace(/\{\\[^}\n]*\}/g, "") // ASS/SSA override blocks such as {\an8}
    .replace(/\\N/gi, "\n")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, name: string) => entity(match, name))
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b\u202a-\u202e\u2066-\u2069]/g, "")
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter(Boolean)
    .join("\n");
  return capCaption(text);
}

function entity(match: string, name: string): string {
  if (name.startsWith("#")) {
    const code =
      name[1] === "x" || name[1] === "X"
        ? Number.parseInt(name.slice(2), 16)
        : Number(name.slice(1));
    return code > 0x1f && code <= 0x10ffff ? String.fromCodePoint(code) : "";
  }
  return ENTITIES[name.toLowerCase()] ?? match;
}

/** At most MAX_CAPTION_CHARS characters (code points kept whole). */
export function capCaption(text: string): string {
  if (text.length <= MAX_CAPTION_CHARS) return text;
  const chars = Array.from(text.slice(0, MAX_CAPTION_CHARS));
  let capped = chars.join("");
  while (capped.length > MAX_CAPTION_CHARS) capped = capped.slice(0, -1);
  return capped;
}

/** The text on screen at `time`: every cue with start ≤ time < end, joined by newlines. */
export function captionAt(cues: Cue[], time: number): string | null {
  const texts: string[] = [];
  for (const cue of cues) {
    if (cue.start > time) break;
    if (time < cue.end && !texts.includes(cue.text)) texts.push(cue.text);
  }
  return texts.length > 0 ? capCaption(texts.join("\n")) : null;
}

/** A WebVTT file of our own from the cues: text escaped, so it reads back as the same data. */
export function writeWebVtt(cues: Cue[], language: string | null): string {
  const header = language
    ? `WEBVTT\nLanguage: ${language.replace(/[^A-Za-z0-9-]/g, "")}\n`
    : "WEBVTT\n";
  const blocks = cues.map(
    (cue) =>
      `${vttTime(cue.start)} --> ${vttTime(cue.end)}\n${cue.text
        .replace(/&/g, "&amp;")
        .replace(/</g, "&lt;")
        .replace(/>/g, "&gt;")}`,
  );
  return `${[header.trimEnd(), ...blocks].join("\n\n")}\n`;
}

function vttTime(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}
