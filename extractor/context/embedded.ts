// A direct file's own subtitle track (mov_text in MP4, SRT/WebVTT/ASS in Matroska), read by
// ffmpeg from the same input the frames came from and converted to WebVTT text, which we then
// parse like any other file. Picture-based tracks (DVD, Blu-ray) carry no text and are skipped.
import { finished } from "node:stream/promises";
import { safeInputArgs } from "../ffmpeg/args.ts";
import type { SubtitleProbe } from "../ffmpeg/probe.ts";
import { startTool } from "../ffmpeg/process.ts";
import { CaptionsError, decodeSubtitleBytes, MAX_SUBTITLE_BYTES } from "./cues.ts";
import { bestLanguageMatch } from "./languages.ts";

const TEXT_CODECS = new Set(["mov_text", "subrip", "srt", "webvtt", "ass", "ssa", "text"]);

/** The requested language's track, else the default one, else the first; forced tracks last. */
export function chooseEmbeddedTrack(
  tracks: SubtitleProbe[],
  wanted: string | null,
): SubtitleProbe | null {
  const text = tracks.filter((t) => TEXT_CODECS.has(t.codec));
  // A forced track holds only signs or foreign-language lines: dialogue tracks come first.
  const ordered = [...text.filter((t) => !t.isForced), ...text.filter((t) => t.isForced)];
  if (ordered.length === 0) return null;
  const match = bestLanguageMatch(
    ordered.map((t) => t.language),
    wanted,
  );
  if (match >= 0) return ordered[match];
  return ordered.find((t) => t.isDefault) ?? ordered[0];
}

/**
 * The track as WebVTT text with absolute times (-copyts), so the caller can put them on the
 * frames' clock by subtracting the video's start time.
 */
export async function readEmbeddedTrack(
  input: string,
  track: SubtitleProbe,
  signal: AbortSignal,
): Promise<string> {
  const args = [
    "-v",
    "error",
    "-nostdin",
    "-copyts",
    ...safeInputArgs(input),
    "-map",
    `0:s:${track.subtitleIndex}`,
    "-c:s",
    "webvtt",
    "-f",
    "webvtt",
    "pipe:1",
  ];
  // Raw bytes, not runTool's text: bad UTF-8 must fail the captions, not become U+FFFD.
  const running = startTool("ffmpeg", args, { signal });
  const chunks: Buffer[] = [];
  let size = 0;
  running.stdout.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_SUBTITLE_BYTES) running.kill();
    else chunks.push(chunk);
  });
  const [{ code }] = await Promise.all([running.exited, finished(running.stdout).catch(() => {})]);
  if (signal.aborted) throw signal.reason;
  if (size > MAX_SUBTITLE_BYTES) {
    throw new CaptionsError(`the subtitle track is larger than ${MAX_SUBTITLE_BYTES} bytes`);
  }
  if (code !== 0) throw new CaptionsError(`the ${track.codec} subtitle track could not be read`);
  return decodeSubtitleBytes(Buffer.concat(chunks));
}
