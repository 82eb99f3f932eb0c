// The one error every source failure becomes. `name` is the spec's API error type, so the
// extractor can put it straight into the job's JobError.
import type { ExtractErrorName } from "../../schema/messages.ts";

const USER_MESSAGES: Partial<Record<ExtractErrorName, string>> = {
  PrivateContent: "This video is private, deleted or needs a login, so it can't be processed.",
  NoVideoFound: "No video was found at this link.",
  DownloadFailed: "The video could not be downloaded. Please try again later.",
};

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
    return privateContent(`the source answered ${status} (deleted or not shared): ${url}`);
  }
  return downloadFailed(`the source answered HTTP ${status}: ${url}`);
}

export function asSourceError(error: unknown, context: string): SourceError {
  if (error instanceof SourceError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return downloadFailed(`${context}: ${detail}`);
}
