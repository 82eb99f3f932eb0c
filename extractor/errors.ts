// The errors a job can end with, in the ExtractResult.error shape {name, message, userMessage}.
// `message` is for operators; `userMessage` is short and safe to show to end users.
import { EXTRACT_ERROR_NAMES, type ExtractErrorName } from "../schema/messages.ts";
import { MediaToolError } from "./ffmpeg/process.ts";

export interface JobErrorShape {
  name: ExtractErrorName;
  message: string;
  userMessage: string;
}

export class ExtractError extends Error {
  override readonly name: ExtractErrorName;
  readonly userMessage: string;

  constructor(name: ExtractErrorName, message: string, userMessage: string) {
    super(message);
    this.name = name;
    this.userMessage = userMessage;
  }
}

/** The job ran past its wall-clock budget; everything it started has been killed. */
export const DEADLINE_MESSAGE_START = "the job took longer than its";

export class DeadlineError extends Error {
  constructor(seconds: number) {
    super(`${DEADLINE_MESSAGE_START} ${seconds} s deadline`);
    this.name = "DeadlineError";
  }
}

export function toJobError(error: unknown): JobErrorShape {
  if (error instanceof ExtractError) return pick(error);
  // Errors from the sources module (SourceError) already carry an API name and user message.
  const candidate = error as { name?: unknown; message?: unknown; userMessage?: unknown };
  if (
    typeof candidate?.name === "string" &&
    (EXTRACT_ERROR_NAMES as readonly string[]).includes(candidate.name) &&
    typeof candidate.userMessage === "string"
  ) {
    return {
      name: candidate.name as ExtractErrorName,
      message: String(candidate.message ?? candidate.name),
      userMessage: candidate.userMessage,
    };
  }
  if (error instanceof DeadlineError) {
    return {
      name: "ExtractionFailed",
      message: error.message,
      userMessage: "Extracting the frames took too long. Try fewer frames or a shorter range.",
    };
  }
  const detail =
    error instanceof MediaToolError
      ? `${error.message}: ${lastLine(error.stderrTail)}`
      : error instanceof Error
        ? error.message
        : String(error);
  return {
    name: "ExtractionFailed",
    message: withoutInternalUrls(detail),
    userMessage: "The frames could not be extracted from this video.",
  };
}

/**
 * ffmpeg names its input in its errors, and that input is the extractor's loopback relay,
 * whose path is a secret token: what reaches the job's error must not carry it.
 */
export function withoutInternalUrls(text: string): string {
  return text.replace(/https?:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/\S*/g, "<source>");
}

/**
 * The exact address of one job's relay, and its secret path alone, replaced: catches the
 * token wherever a tool quotes it, even outside a URL the pattern above recognises.
 */
export function withoutSourceAddress(text: string, input: string): string {
  let cleaned = withoutInternalUrls(text);
  if (!/^https?:/i.test(input)) return cleaned;
  const secret = new URL(input).pathname.slice(1);
  cleaned = cleaned.replaceAll(input, "<source>");
  return secret.length >= 16 ? cleaned.replaceAll(secret, "<source>") : cleaned;
}

function pick(error: ExtractError): JobErrorShape {
  return { name: error.name, message: error.message, userMessage: error.userMessage };
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return lines[lines.length - 1] ?? "";
}
