// The one error every source failure becomes. `name` is the spec's API error type, so the
// extractor can put it straight into the job's JobError.
import type { ExtractErrorName } from "../../schema/messages.ts";

const USER_MESSAGES: Partial<Record<ExtractErrorName, string>> = {
  PrivateContent: "This video is private, deleted or needs a login, so it can't be processed.",
  NoVideoFound: "No video was found at this link.",
  // Most failed downloads stay failed on a retry (a refused request, a file too large, an
  // unsupported stream): only the ones below that say so (interruptedDownload, a 5xx or 429)
  // tell the user to try again.
  DownloadFailed: "The video could not be downloaded from this link.",
};

/**
 * The caller's own direct link answered something that is not a video (a page without one, a
 * text file, a playlist): the link is wrong, as the edge said with 400 InvalidUrl when it still
 * asked at creation (decision 0260).
 */
export function notAVideoLink(what: string): SourceError {
  return new SourceError(
    "InvalidUrl",
    `the link is not a video file (${what}); use a direct .mp4, .mov or .webm link or a supported platform`,
    "That link isn't a supported public video URL.",
  );
}

/** A link that answered 404 or 410: still PrivateContent (the spec's rule), in true words. */
const NOT_FOUND_MESSAGE =
  "This link was not found: the video may have been deleted, or the address is mistyped.";

export class SourceError extends Error {
  override readonly name: ExtractErrorName;
  readonly userMessage: string;

  constructor(name: ExtractErrorName, message: string, userMessage?: string) {
    super(message);
    this.name = name;
    this.userMessage = userMessage ?? USER_MESSAGES[name] ?? "The video could not be processed.";
  }

  toJobError(): { name: ExtractErrorName; message: string; userMessage: string } {
    return { name: this.name, message: this.message, userMessage: this.userMessage };
  }
}

export function privateContent(message: string): SourceError {
  return new SourceError("PrivateContent", message);
}

export function noVideoFound(message: string): SourceError {
  return new SourceError("NoVideoFound", message);
}

export function downloadFailed(message: string, userMessage?: string): SourceError {
  return new SourceError("DownloadFailed", message, userMessage);
}

/** A download that a later try may well finish: a timeout, a stall, a cut connection. */
export function interruptedDownload(message: string): SourceError {
  return downloadFailed(
    message,
    "The download from the video's server did not finish. Please try again later.",
  );
}

/** The link names nothing (HTTP 404/410, a deleted or unknown video). */
export function linkNotFound(message: string): SourceError {
  return new SourceError("PrivateContent", message, NOT_FOUND_MESSAGE);
}

/** A destination the address rules refuse: the link (or a redirect) leads somewhere private. */
export function refusedDestination(reason: string): SourceError {
  return downloadFailed(
    `refused destination: ${reason}`,
    "The link leads to a private or reserved network address, which Stills does not fetch.",
  );
}

/** HTTP status of a source answer → the spec's error (401/403 login, 404/410 deleted). */
export function errorForStatus(status: number, url: string): SourceError {
  if (status === 401 || status === 403) {
    return privateContent(`the source answered ${status} (login or permission required): ${url}`);
  }
  if (status === 404 || status === 410) {
    return linkNotFound(`the link was not found: the source answered ${status}: ${url}`);
  }
  if (status === 429 || status >= 500) {
    return downloadFailed(
      `the source answered HTTP ${status}: ${url}`,
      `The video's server is busy or failing (HTTP ${status}). Please try again later.`,
    );
  }
  return downloadFailed(
    `the source answered HTTP ${status}: ${url}`,
    `The video's server refused the download (HTTP ${status}).`,
  );
}

export function asSourceError(error: unknown, context: string): SourceError {
  if (error instanceof SourceError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return downloadFailed(`${context}: ${detail}`);
}
