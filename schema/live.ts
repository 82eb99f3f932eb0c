// mode live's bounds and words (decision 0360), shared by the API's schema, the edge's options
// and the extractor.

/** Longest a live job may watch with every/duration (issue 40: 10 minutes). */
export const LIVE_MAX_DURATION_SECONDS = 600;

/**
 * Where a live frame's captured_at comes from: the segment's EXT-X-PROGRAM-DATE-TIME plus the
 * frame's offset in it, or, when the stream gives none, the moment Stills read the segment.
 */
export const CAPTURED_AT_SOURCES = ["program_date_time", "received"] as const;
export type CapturedAtSource = (typeof CAPTURED_AT_SOURCES)[number];
