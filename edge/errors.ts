// One error class for every failure a client can see. Handlers throw it; only the app's
// onError turns it into the spec's error body (DESIGN.md's status mapping).
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ApiErrorName } from "../schema/api.ts";

export const STATUS_OF: Record<ApiErrorName, ContentfulStatusCode> = {
  InvalidUrl: 400,
  InvalidRequest: 400,
  NoVideoFound: 400,
  PrivateContent: 400,
  DownloadFailed: 400,
  VideoTooLong: 400,
  TooManyFrames: 400,
  ResolutionNotAllowed: 400,
  InsufficientBalance: 402,
  InvalidApiKey: 401,
  AuthenticationRequired: 401,
  RateLimited: 429,
  DemoLimitReached: 429,
  JobNotFound: 404,
  ExtractionFailed: 500,
  ServiceUnavailable: 503,
  NotFound: 404,
  MethodNotAllowed: 405,
};

const CLASS_OF: Record<number, { name: string; className: string }> = {
  400: { name: "BadRequest", className: "bad-request" },
  401: { name: "NotAuthenticated", className: "not-authenticated" },
  402: { name: "PaymentError", className: "payment-error" },
  404: { name: "NotFound", className: "not-found" },
  405: { name: "MethodNotAllowed", className: "method-not-allowed" },
  429: { name: "TooManyRequests", className: "too-many-requests" },
  500: { name: "GeneralError", className: "general-error" },
  503: { name: "Unavailable", className: "unavailable" },
};

/** One problem with a request: the parameter it concerns (null when none), in plain words. */
export interface Problem {
  param: string | null;
  message: string;
}

export interface ErrorBody {
  name: string;
  message: string;
  code: number;
  className: string;
  data: {
    name: ApiErrorName;
    userMessage: string;
    reason?: "malformed" | "invalid";
    errors: Problem[];
    request_id: string | null;
    doc_url: string;
  };
}

/** What an error body says about where it was answered: the request and the docs' origin. */
export interface ErrorContext {
  requestId: string | undefined;
  origin: string;
}

/** The guide that explains an error name: one anchor per name on the errors page. */
export const ERRORS_GUIDE_PATH = "/docs/errors";

export function errorDocUrl(origin: string, name: ApiErrorName): string {
  return `${origin}${ERRORS_GUIDE_PATH}#${name}`;
}

/**
 * The parameter a message names by the edge's convention of starting it with `field: `
 * (edge/sources.ts, the MCP cursor); anything else concerns no single parameter.
 */
function paramNamedBy(message: string): string | null {
  return /^([a-z][a-z0-9_]*(?:\[\d+\])?): /.exec(message)?.[1] ?? null;
}

export class ApiError extends HTTPException {
  readonly apiName: ApiErrorName;
  readonly userMessage: string;
  readonly reason?: "malformed" | "invalid";
  readonly retryAfter?: number;
  /** The methods a route answers, sent as `Allow` with MethodNotAllowed. */
  readonly allow?: string[];
  /** Every problem found; the first is the message. */
  readonly problems: Problem[];

  constructor(
    apiName: ApiErrorName,
    message: string,
    extra: {
      userMessage?: string;
      reason?: "malformed" | "invalid";
      retryAfter?: number;
      allow?: string[];
      /** The parameter the message is about, when the message does not start with it. */
      param?: string | null;
      /** All problems, when there are several (the first should be `message`). */
      problems?: Problem[];
    } = {},
  ) {
    super(STATUS_OF[apiName], { message });
    this.apiName = apiName;
    this.userMessage = extra.userMessage ?? message;
    this.reason = extra.reason;
    this.retryAfter = extra.retryAfter;
    this.allow = extra.allow;
    this.problems =
      extra.problems && extra.problems.length > 0
        ? extra.problems
        : [{ param: extra.param !== undefined ? extra.param : paramNamedBy(message), message }];
  }

  /** The body as answered; without a context (outside a request) doc_url is a path. */
  toBody(context: ErrorContext = { requestId: undefined, origin: "" }): ErrorBody {
    const cls = CLASS_OF[this.status] ?? CLASS_OF[500];
    return {
      name: cls.name,
      message: this.message,
      code: this.status,
      className: cls.className,
      data: {
        name: this.apiName,
        userMessage: this.userMessage,
        ...(this.reason ? { reason: this.reason } : {}),
        errors: this.problems,
        request_id: context.requestId ?? null,
        doc_url: errorDocUrl(context.origin, this.apiName),
      },
    };
  }
}
