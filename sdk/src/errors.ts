// What a call can throw. An answer from the API is a StillsError carrying the spec's error body;
// a request that never got an answer is a StillsConnectionError.
import type { ApiErrorName, ErrorBody, ErrorData, Problem } from "./types.ts";

/** data.name for an answer whose body is not the API's (a proxy's HTML page, say). */
function nameForStatus(status: number): ApiErrorName {
  if (status === 401) return "AuthenticationRequired";
  if (status === 402) return "InsufficientBalance";
  if (status === 404) return "NotFound";
  if (status === 405) return "MethodNotAllowed";
  if (status === 429) return "RateLimited";
  if (status >= 500) return "ServiceUnavailable";
  return "InvalidRequest";
}

export class StillsError extends Error {
  override readonly name = "StillsError";
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The spec's error data: `name` (the API error type), `userMessage`, `errors`, `request_id`, `doc_url`. */
  readonly data: ErrorData;
  /** The whole error body as the API sent it (or as the SDK made it from an answer that had none). */
  readonly body: ErrorBody;
  /** Seconds the API asked to wait (Retry-After), when it did. */
  readonly retryAfter: number | null;
  readonly headers: Headers;

  constructor(status: number, body: ErrorBody, headers: Headers) {
    super(body.message);
    this.status = status;
    this.body = body;
    this.data = body.data;
    this.headers = headers;
    const retryAfter = Number(headers.get("retry-after"));
    this.retryAfter = headers.has("retry-after") && Number.isFinite(retryAfter) ? retryAfter : null;
  }

  /** A short message fit to show to end users. */
  get userMessage(): string {
    return this.data.userMessage;
  }

  /** The request's id (X-Request-Id): quote it to support. */
  get requestId(): string | null {
    return this.data.request_id ?? this.headers.get("x-request-id");
  }

  /** Every problem the API found with the request. */
  get errors(): Problem[] {
    return this.data.errors;
  }

  /** The guide to this error. */
  get docUrl(): string {
    return this.data.doc_url;
  }

  /** Builds the error from an answer, whatever its body holds. */
  static async fromResponse(response: Response): Promise<StillsError> {
    const text = await response.text().catch(() => "");
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (isErrorBody(parsed)) return new StillsError(response.status, parsed, response.headers);
    const message = `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`;
    const body: ErrorBody = {
      name: "Error",
      message,
      code: response.status,
      className: "error",
      data: {
        name: nameForStatus(response.status),
        userMessage: "Something went wrong on our side. Please try again.",
        errors: [{ param: null, message }],
        request_id: response.headers.get("x-request-id"),
        doc_url: "https://api.stills.dev/docs/errors",
      },
    };
    return new StillsError(response.status, body, response.headers);
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== "object" || value === null) return false;
  const data = (value as { data?: unknown }).data;
  return (
    typeof (value as { message?: unknown }).message === "string" &&
    typeof data === "object" &&
    data !== null &&
    typeof (data as { name?: unknown }).name === "string"
  );
}

/** No answer came (the network failed, or the request timed out), after every retry. */
export class StillsConnectionError extends Error {
  override readonly name = "StillsConnectionError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** waitFor's timeout passed before the job finished; `job` is the last state seen. */
export class StillsTimeoutError<T = unknown> extends Error {
  override readonly name = "StillsTimeoutError";
  readonly job: T;
  constructor(message: string, job: T) {
    super(message);
    this.job = job;
  }
}

/** A webhook delivery that must not be trusted: bad signature, old timestamp, missing header. */
export class StillsWebhookError extends Error {
  override readonly name = "StillsWebhookError";
}
