// captions: true — the platform's or the file's own captions as WebVTT, and on each delivered
// frame the cue on screen at its time (issue #15 fills this in). A broken subtitle file fails
// only the captions, never the frames.
import type { FrameResult, JobOptions, ResultCaptions } from "../../schema/messages.ts";
import type { MediaProbe } from "../ffmpeg/probe.ts";
import type { SourceHandle } from "../source-input.ts";

export interface CaptionsContext {
  input: string;
  probe: MediaProbe;
  source: SourceHandle | null;
  options: JobOptions;
  signal: AbortSignal;
  /** Stores a file of the job (and adds it to the ZIP when there is one); returns its key. */
  store(name: string, bytes: Uint8Array, contentType: string): Promise<string>;
}

export interface CaptionsOutcome {
  captions: ResultCaptions | null;
  /** Why there are none, for the job's notice. */
  note: string | null;
}

/** Finds, stores and attaches the captions; sets `caption` on the delivered frames. */
export async function attachCaptions(
  _context: CaptionsContext,
  _frames: FrameResult[],
): Promise<CaptionsOutcome> {
  return { captions: null, note: "This video has no captions, so none were returned." };
}
