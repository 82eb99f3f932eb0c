// A platform's caption tracks, as yt-dlp lists them in the info it already printed: the
// uploader's own tracks first, the platform's automatic ones only when there are none. The
// chosen file is fetched by us through the source's checked path, never by yt-dlp.
import type { PlatformInfo, SubtitleFile } from "../sources/ytdlp.ts";
import { bestLanguageMatch, normalizeLanguage } from "./languages.ts";

export interface PlatformTrack {
  /** The tag the platform used, as a client should see it. */
  language: string | null;
  source: "uploader" | "automatic";
  file: SubtitleFile;
}

/** Formats we parse, best first (both are cue text; the rest are JSON or XML dialects). */
const READABLE_EXTENSIONS = ["vtt", "srt"];

/**
 * Language order within a kind: the requested one, else the video's own, else English, else
 * the first listed. Chat replays ("live_chat") are not captions.
 */
export function choosePlatformTrack(
  info: PlatformInfo,
  wanted: string | null,
): PlatformTrack | null {
  const kinds = [
    { source: "uploader" as const, tracks: info.subtitles },
    { source: "automatic" as const, tracks: info.automatic_captions },
  ];
  for (const { source, tracks } of kinds) {
    const candidates = Object.entries(tracks)
      .filter(([tag]) => !/^(live_chat|rechat)$/i.test(tag))
      .map(([tag, files]) => ({ tag, file: readableFile(files) }))
      .filter((c): c is { tag: string; file: SubtitleFile } => c.file !== null);
    if (candidates.length === 0) continue;
    const chosen = pickLanguage(candidates, source, wanted, info.language);
    return {
      language: normalizeLanguage(chosen.tag.replace(/-orig$/i, "")),
      source,
      file: chosen.file,
    };
  }
  return null;
}

function pickLanguage<T extends { tag: string }>(
  candidates: T[],
  source: PlatformTrack["source"],
  wanted: string | null,
  videoLanguage: string | null,
): T {
  const tags = candidates.map((c) => c.tag.replace(/-orig$/i, ""));
  // Automatic lists hold a machine translation into every language; the "-orig" track is the
  // one recognised from the speech itself, so it wins when the language would otherwise tie.
  const origFirst = (index: number) => {
    if (index < 0 || source !== "automatic") return index;
    const primary = tags[index].split("-")[0].toLowerCase();
    const orig = candidates.findIndex(
      (c) => /-orig$/i.test(c.tag) && c.tag.split("-")[0].toLowerCase() === primary,
    );
    return orig >= 0 ? orig : index;
  };
  for (const language of [wanted, videoLanguage, "en"]) {
    const index = origFirst(bestLanguageMatch(tags, language));
    if (index >= 0) return candidates[index];
  }
  const orig = candidates.find((c) => /-orig$/i.test(c.tag));
  return orig ?? candidates[0];
}

function readableFile(files: SubtitleFile[]): SubtitleFile | null {
  for (const ext of READABLE_EXTENSIONS) {
    const file = files.find((f) => f.ext.toLowerCase() === ext);
    if (file) return file;
  }
  return null;
}
