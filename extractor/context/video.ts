// job.video: what the extractor learned about the source while reading it, with no second
// fetch. From ffprobe always; for platform links also from the info yt-dlp already printed.
// Platform fields are strangers' text: type-checked, stripped of control characters, capped.
import type { VideoFacts } from "../../schema/messages.ts";
import { MAX_URL_LENGTH } from "../../schema/url-safety.ts";
import type { MediaProbe, VideoProbe } from "../ffmpeg/probe.ts";
import type { SourceHandle } from "../source-input.ts";
import type { PlatformInfo } from "../sources/ytdlp.ts";

export function describeVideo(
  probe: MediaProbe & { video: VideoProbe },
  durationSeconds: number,
  source: SourceHandle | null,
): VideoFacts {
  const video = probe.video;
  const facts: VideoFacts = {
    duration_seconds: Math.round(durationSeconds * 1000) / 1000,
    width: video.displayWidth,
    height: video.displayHeight,
    frame_rate: video.frameRate === null ? null : Math.round(video.frameRate * 1000) / 1000,
    codec: video.codec.slice(0, 100),
    rotation: video.rotation,
    has_audio: probe.hasAudio,
  };
  return source?.info ? { ...facts, ...platformFacts(source.info) } : facts;
}

type PlatformFacts = Pick<
  VideoFacts,
  "title" | "uploader" | "channel" | "upload_date" | "view_count" | "page_url"
>;

export function platformFacts(info: PlatformInfo): PlatformFacts {
  return {
    title: cleanText(info.title, 2000),
    uploader: cleanText(info.uploader, 500),
    channel: cleanText(info.channel, 500),
    upload_date: isoDate(info.upload_date),
    view_count: info.view_count,
    page_url: pageUrl(info.webpage_url),
  };
}

function cleanText(value: string | null, max: number): string | null {
  if (value === null) return null;
  const text = value
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return null;
  return Array.from(text).slice(0, max).join("").slice(0, max);
}

/** yt-dlp's YYYYMMDD as YYYY-MM-DD, only when it is a real calendar date. */
function isoDate(value: string | null): string | null {
  const match = /^(\d{4})(\d{2})(\d{2})$/.exec(value ?? "");
  if (!match) return null;
  const iso = `${match[1]}-${match[2]}-${match[3]}`;
  const parsed = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(iso) ? iso : null;
}

function pageUrl(value: string | null): string | null {
  if (!value || value.length > MAX_URL_LENGTH) return null;
  try {
    const url = new URL(value);
    const web = url.protocol === "https:" || url.protocol === "http:";
    return web && url.href.length <= MAX_URL_LENGTH ? url.href : null;
  } catch {
    return null;
  }
}
