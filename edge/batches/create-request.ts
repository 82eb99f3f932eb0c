// A batch's stored options and the job request each of its items makes of them.
import type { CreateJobRequest } from "../../schema/api.ts";
import type { BatchPlaylist, CreateBatchRequest } from "../../schema/batches.ts";

/** The job options a batch's items share: the request without its links. */
export type BatchOptions = Omit<CreateBatchRequest, "urls" | "url">;

/** One item's job request: the batch's options with the item's link. */
export function itemJobRequest(options: BatchOptions, url: string): CreateJobRequest {
  return { ...options, url } as CreateJobRequest;
}

/**
 * The batch row's `options` text: the options, and for a batch made of one link what it
 * expanded to under "$playlist" (no job option has that name), so no column is needed.
 */
const PLAYLIST_KEY = "$playlist";

export function storedOptions(options: BatchOptions, playlist: BatchPlaylist | null): string {
  return JSON.stringify(playlist ? { ...options, [PLAYLIST_KEY]: playlist } : options);
}

export function readStoredOptions(text: string): {
  options: BatchOptions;
  playlist: BatchPlaylist | null;
} {
  const { [PLAYLIST_KEY]: playlist, ...options } = JSON.parse(text) as Record<string, unknown>;
  return { options: options as BatchOptions, playlist: (playlist as BatchPlaylist) ?? null };
}
