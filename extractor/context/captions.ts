// captions: true — the platform's or the file's own captions as a WebVTT file we write, and on
// each delivered frame the cue on screen at its pts. No speech recognition: a video without
// captions says so. A broken or hostile subtitle file fails only the captions, never the frames.
import type { FrameResult, JobOptions, ResultCaptions } from "../../schema/messages.ts";
import type { MediaProbe } from "../ffmpeg/probe.ts";
import { log } from "../log.ts";
import type { SourceHandle } from "../source-input.ts";
import type { Cue } from "./cues.ts";
import {
  CaptionsError,
  captionAt,
  decodeSubtitleBytes,
  MAX_SUBTITLE_BYTES,
  parseCues,
  writeWebVtt,
} from "./cues.ts";
import { chooseEmbeddedTrack, readEmbeddedTrack } from "./embedded.ts";
import { normalizeLanguage } from "./languages.ts";
import { choosePlatformTrack } from "./platform.ts";

export interface CaptionsContext {
  input: string;
  probe: MediaProbe;
  source: SourceHandle | null;
  options: JobOptions;
  signal: AbortSignal;
  /** Stores a file of the job (and adds it to the ZIP when there is one); returns its key. */
  store(name: string, bytes: Uint8Array, contentType: string): Promise<string>;
  /** Longest the search may take (CAPTIONS_TIMEOUT_MS by default). */
  timeoutMs?: number;
}

export interface CaptionsOutcome {
  captions: ResultCaptions | null;
  /** Why there are none, for the job's notice. */
  note: string | null;
}

export const CAPTIONS_FILE_NAME = "captions.vtt";

export const NO_CAPTIONS_NOTE =
  "This video has no captions, so none were returned; captions were not charged.";

/**
 * Captions may not spend the job's deadline: a slow caption host or a Matroska track read
 * again over the relay gives up here, and the frames already decoded are still delivered.
 */
export const CAPTIONS_TIMEOUT_MS = 60_000;

/** Cues past this are junk (a time in the year 3000) when the video's length is unknown. */
const UNKNOWN_LENGTH_LIMIT_SECONDS = 100 * 3600;

interface FoundCaptions {
  cues: Cue[];
  language: string | null;
  source: ResultCaptions["source"];
}

/** Finds, stores and attaches the captions; sets `caption` on the delivered frames. */
export async function attachCaptions(
  context: CaptionsContext,
  frames: FrameResult[],
): Promise<CaptionsOutcome> {
  let found: FoundCaptions | null;
  const timeoutMs = context.timeoutMs ?? CAPTIONS_TIMEOUT_MS;
  const ownTime = AbortSignal.timeout(timeoutMs);
  try {
    found = await findCaptions({ ...context, signal: AbortSignal.any([context.signal, ownTime]) });
  } catch (error) {
    if (context.signal.aborted) throw error;
    // Our own sentences only: anything else (an ffmpeg or socket error) stays in the log.
    const reason = ownTime.aborted
      ? `reading them took longer than ${Math.round(timeoutMs / 1000)} s`
      : error instanceof CaptionsError
        ? error.message
        : "the subtitle file could not be read";
    log("warn", "captions failed", { reason, detail: String(error).slice(0, 500) });
    return {
      captions: null,
      note: `This video's captions could not be read (${reason}), so none were returned; the frames are complete and captions were not charged.`,
    };
  }
  if (!found) return { captions: null, note: NO_CAPTIONS_NOTE };
  for (const frame of frames) {
    frame.caption =
      frame.status === "ok" && frame.pts !== null ? captionAt(found.cues, frame.pts) : null;
  }
  const file = new TextEncoder().encode(writeWebVtt(found.cues, found.language));
  const key = await context.store(CAPTIONS_FILE_NAME, file, "text/vtt; charset=utf-8");
  log("info", "captions stored", {
    source: found.source,
    language: found.language,
    cues: found.cues.length,
    bytes: file.byteLength,
  });
  return { captions: { key, language: found.language, source: found.source }, note: null };
}

type FetchFile = NonNullable<SourceHandle["fetchSmallFile"]>;

/**
 * The download's own error can name hosts and signed URLs; the job's notice says only what
 * went wrong, and the log keeps the detail.
 */
async function fetchCaptionFile(fetchFile: FetchFile, url: string, signal: AbortSignal) {
  try {
    return await fetchFile(url, MAX_SUBTITLE_BYTES, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    log("warn", "caption download failed", { detail: detail.slice(0, 500) });
    throw new CaptionsError(
      /larger than/.test(detail)
        ? `the platform's caption file is larger than ${MAX_SUBTITLE_BYTES} bytes`
        : "the platform's caption file could not be downloaded",
    );
  }
}

async function findCaptions(context: CaptionsContext): Promise<FoundCaptions | null> {
  const wanted = context.options.captions_language ?? null;
  const video = context.probe.video;
  const lastSecond = video?.durationSeconds ?? UNKNOWN_LENGTH_LIMIT_SECONDS;
  const info = context.source?.info;
  const fetchFile = context.source?.fetchSmallFile?.bind(context.source);
  if (info && fetchFile) {
    const track = choosePlatformTrack(info, wanted);
    if (track) {
      const bytes = await fetchCaptionFile(fetchFile, track.file.url, context.signal);
      // The platform's times are on the player's clock, which starts at the first frame.
      const cues = parseCues(decodeSubtitleBytes(bytes), 0, lastSecond);
      if (cues.length === 0) throw new CaptionsError("the platform's caption file has no cues");
      return { cues, language: track.language, source: track.source };
    }
  }
  const track = chooseEmbeddedTrack(context.probe.subtitles ?? [], wanted);
  if (!track) return null;
  const text = await readEmbeddedTrack(context.input, track, context.signal);
  // ffmpeg wrote absolute times (-copyts); frames are timed from the video's first frame.
  const cues = parseCues(text, video?.startTime ?? 0, lastSecond);
  if (cues.length === 0) throw new CaptionsError("the file's subtitle track has no cues");
  return { cues, language: normalizeLanguage(track.language), source: "embedded" };
}
