// The command's exit codes, as `stills --help` and sdk/README.md document them.
import { StillsError } from "../errors.ts";

export const EXIT = {
  done: 0,
  /** The job failed or expired, or a request failed for another reason (not found, 5xx, network). */
  failed: 1,
  /** Bad usage: unknown flags, missing arguments, or a request the API refused as invalid (400). */
  usage: 2,
  /** No key, or a key the API refused (401). */
  auth: 3,
  /** Not enough credits (402). */
  credits: 4,
  /** Still rate limited (429) after the SDK's retries. */
  rateLimited: 5,
} as const;

export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (!(error instanceof StillsError)) return EXIT.failed;
  if (error.status === 400) return EXIT.usage;
  if (error.status === 401) return EXIT.auth;
  if (error.status === 402) return EXIT.credits;
  if (error.status === 429) return EXIT.rateLimited;
  return EXIT.failed;
}

/** A mistake in how the command was called. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** No key in STILLS_API_KEY nor in the stored login. */
export class NoKeyError extends Error {
  override readonly name = "NoKeyError";
}
