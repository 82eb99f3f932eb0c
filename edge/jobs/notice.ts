// The sentences a job carries about itself: `notice` (what state it is in and what to do)
// and `resolution_note` (why frames are smaller than asked). Both are written from the job's
// own data when it is read, so they cannot contradict it: a job that is processing does not
// say "Queued", an expired one does not promise files until a past date, and a note names
// the size actually delivered.
import { RESOLUTIONS, ZIP_ALWAYS_ABOVE_FRAMES } from "../../schema/plans.ts";

export interface NoticeFacts {
  id: string;
  /** As clients see it: a completed job past its expiry is already "expired". */
  status: string;
  expiresAt: string | null;
  framesCount: number | null;
  zipped: boolean;
  resolutionNote: string | null;
  errorMessage: string | null;
  /** Why a job that asked for captions has none. */
  captionsNote?: string | null;
}

export function jobNotice(job: NoticeFacts): string {
  const follow = `Poll GET /v1/jobs/${job.id}, pass wait=true, or set webhook_url to hear when it is done.`;
  switch (job.status) {
    case "queued":
      return `Queued. ${follow}`;
    case "processing":
      return `Processing: the video is being fetched and its frames extracted. ${follow}`;
    case "expired":
      return `Expired: its files were deleted at the end of their retention (${job.expiresAt}). Create the job again for new frames.`;
    case "failed":
      return job.errorMessage ?? "The job failed.";
    default: {
      const parts = [`Completed. Files are available until ${job.expiresAt}.`];
      if (job.zipped && (job.framesCount ?? 0) > ZIP_ALWAYS_ABOVE_FRAMES) {
        parts.push(`Jobs over ${ZIP_ALWAYS_ABOVE_FRAMES} frames are always zipped.`);
      }
      if (job.resolutionNote) parts.push(job.resolutionNote);
      if (job.captionsNote) parts.push(job.captionsNote);
      return parts.join(" ");
    }
  }
}

export interface DeliveredSize {
  requested: number | null;
  delivered: number | null;
  /** The source's display size. */
  width: number | null;
  height: number | null;
  /** The width frames had to fit (the job's max_width, capped by the plan's). */
  maxWidth: number | null;
  /** The width came from a token budget's choice, not from max_width or the plan. */
  byBudget?: boolean;
  /** What the extractor said, used only when the size alone cannot explain the result. */
  extractorNote: string | null;
}

/** Why frames are smaller than requested, naming the size delivered; null when they are not. */
export function resolutionNote(size: DeliveredSize): string | null {
  const { requested, delivered } = size;
  if (requested === null || delivered === null || delivered >= requested) return null;
  const shortSide = size.width && size.height ? Math.min(size.width, size.height) : null;
  const sourceBelow = shortSide !== null && shortSide < requested;
  const reachable = sourceBelow
    ? (RESOLUTIONS.filter((r) => r <= shortSide).pop() ?? shortSide)
    : requested;
  const narrowed = size.maxWidth !== null && delivered < reachable;
  const fit = size.byBudget
    ? `to fit the token budget (${size.maxWidth} px wide)`
    : `to fit a width of ${size.maxWidth} px`;
  if (sourceBelow && narrowed) {
    return `The video is ${shortSide}p, below the requested ${requested}p, and frames are never upscaled; ${fit} they are delivered at ${delivered}p.`;
  }
  if (sourceBelow) {
    return `The video is ${shortSide}p, below the requested ${requested}p; frames are delivered at ${delivered}p because they are never upscaled.`;
  }
  if (narrowed)
    return `Frames are delivered at ${delivered}p, below the requested ${requested}p, ${fit}.`;
  return size.extractorNote?.includes(`${delivered}p`)
    ? size.extractorNote
    : `Frames are delivered at ${delivered}p, below the requested ${requested}p.`;
}
