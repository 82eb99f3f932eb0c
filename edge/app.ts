// The app factory: validation errors and thrown errors are shaped once, here, for every
// route. Tests build the app the same way the worker does.
import { OpenAPIHono } from "@hono/zod-openapi";
import { drizzle } from "drizzle-orm/d1";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import type { ZodError } from "zod";
import { EdgeConfigError, edgeConfig, publicBaseUrl } from "./config.ts";
import type { AppEnv, Db } from "./context.ts";
import { ApiError, type ErrorContext } from "./errors.ts";
import { errorFields, logEvent, withLogContext } from "./log.ts";
import { applyRateHeaders, enforceIpRate } from "./middleware/rate-limit.ts";
import { allowsPrivateNetwork } from "./sources.ts";
import { BOOKMARK_HEADER, sessionBookmark } from "./storage/d1-sessions.ts";
import { validationError } from "./validation.ts";

export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * The largest body any route reads, refused before it is read (an unauthenticated 90 MB
 * POST was once parsed whole). Only the extractor's uploads are large; the API's own routes
 * set far smaller limits with jsonBody().
 */
function bodyLimitFor(path: string): number {
  if (
    path.startsWith("/internal/files/") ||
    path.startsWith("/internal/file-batches/") ||
    path.startsWith("/internal/uploads/")
  ) {
    return 64 * MIB;
  }
  if (path === "/internal/results") return 16 * MIB;
  return 256 * KIB;
}

function bodyTooLarge(maxBytes: number): ApiError {
  const size = maxBytes >= MIB ? `${maxBytes / MIB} MiB` : `${maxBytes / KIB} KiB`;
  return new ApiError("InvalidRequest", `The request body is larger than ${size}`, {
    userMessage: `The request is too large (the limit is ${size}).`,
  });
}

const limitEveryBody: MiddlewareHandler<AppEnv> = (c, next) => {
  const maxSize = bodyLimitFor(c.req.path);
  return bodyLimit({
    maxSize,
    // Counted against the address like any other refused request.
    onError: async () => {
      await enforceIpRate(c);
      throw bodyTooLarge(maxSize);
    },
  })(c, next);
};

/**
 * A route that takes a JSON body: at most `maxBytes`, and sent as JSON. Without this a form
 * post (what `curl -d` sends) reached the validator's 415 and answered 503.
 */
export function jsonBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw bodyTooLarge(maxBytes);
    },
  });
  return (c, next) => {
    const type = c.req.header("content-type") ?? "";
    if (!/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(type)) {
      throw new ApiError(
        "InvalidRequest",
        `The body must be JSON sent with Content-Type: application/json (got ${type ? `"${type.slice(0, 100)}"` : "no Content-Type"})`,
        { userMessage: "The request must be sent as JSON." },
      );
    }
    return limit(c, next);
  };
}

/** The header the request id travels in, both ways (and on to the extractor). */
export const REQUEST_ID_HEADER = "X-Request-Id";

/**
 * Every request gets an id: the caller's X-Request-Id when it is sane (at most 128 letters,
 * digits, _ - =), else a new UUID. It is answered as X-Request-Id and written in every log line
 * of the request (edge/log.ts), so a customer's complaint names the lines to read.
 */
const tagRequest: MiddlewareHandler<AppEnv> = async (c, next) => {
  await requestId({ headerName: REQUEST_ID_HEADER, limitLength: 128 })(c, async () => {
    await withLogContext({ request: c.get("requestId") }, next);
  });
  // Responses built outside c (MCP, OAuth, files) miss the header c carries: add it there too.
  if (c.res.headers.get(REQUEST_ID_HEADER) !== c.get("requestId")) {
    try {
      c.res.headers.set(REQUEST_ID_HEADER, c.get("requestId"));
    } catch {
      // Immutable headers (a fetched response passed through): copy it once.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set(REQUEST_ID_HEADER, c.get("requestId"));
    }
  }
};

/**
 * A bad setting stops every request with one log line naming it (a worker has no start-up to
 * fail, and `wrangler deploy --dry-run` does not read secrets), instead of failing later in
 * whichever code reads it first.
 */
const requireValidConfig: MiddlewareHandler<AppEnv> = async (c, next) => {
  try {
    edgeConfig(c.env);
  } catch (error) {
    if (!(error instanceof EdgeConfigError)) throw error;
    logEvent("error", "config.invalid", { error: error.message });
    throw new ApiError("ServiceUnavailable", "The service is misconfigured", {
      userMessage: "Something went wrong on our side. Please try again later.",
    });
  }
  await next();
};

/**
 * One drizzle instance per D1 binding (it holds no state of a request): making one on every
 * request cost ~0.1 ms of workerd CPU, even on /healthz.
 */
const drizzles = new WeakMap<D1Database, Db>();

function primaryDb(d1: D1Database): Db {
  let db = drizzles.get(d1);
  if (!db) {
    db = drizzle(d1);
    drizzles.set(d1, db);
  }
  return db;
}

export function createApp() {
  const app = createRouter();
  app.use(tagRequest);
  app.use(requireValidConfig);
  app.use(async (c, next) => {
    // The primary; read routes switch to a replica session (edge/storage/d1-sessions.ts).
    c.set("db", primaryDb(c.env.DB));
    c.set("clientIp", c.req.header("cf-connecting-ip") ?? "unknown");
    await next();
    applyRateHeaders(c);
    // A client that sends this back reads at least what this answer saw.
    const bookmark = sessionBookmark(c);
    if (bookmark) c.header(BOOKMARK_HEADER, bookmark);
  });
  app.use(limitEveryBody);
  app.onError((err, c) => errorResponse(err, c));
  app.notFound(async (c) => {
    // Counted like any public request, so probing for routes costs the same as using them.
    try {
      await enforceIpRate(c);
    } catch (err) {
      return errorResponse(err as Error, c);
    }
    return errorResponse(routeNotFound(c.req.method, c.req.path), c);
  });
  return app;
}

export function routeNotFound(method: string, path: string) {
  return new ApiError("NotFound", `No route for ${method} ${path.slice(0, 200)}`, {
    userMessage: "There is nothing at this address.",
  });
}

export function errorResponse(err: Error, c: Context<AppEnv>) {
  const apiError = err instanceof ApiError ? err : internalError(err, c.req.method, c.req.path);
  if (apiError.retryAfter !== undefined) c.header("Retry-After", String(apiError.retryAfter));
  if (apiError.allow) c.header("Allow", apiError.allow.join(", "));
  const response = c.json(apiError.toBody(errorContext(c)), apiError.status);
  applyRateHeaders(c, response);
  return response;
}

/** Where an error body was answered: its request id, and the origin its doc_url points at. */
export function errorContext(c: Context<AppEnv>): ErrorContext {
  let origin: string;
  try {
    origin = publicBaseUrl(c.env, c.req.url);
  } catch {
    // The settings themselves are what failed (ServiceUnavailable): the request's own origin.
    origin = new URL(c.req.url).origin;
  }
  return { requestId: c.get("requestId"), origin };
}

function internalError(err: Error, method: string, path: string): ApiError {
  const status = "status" in err ? err.status : undefined;
  // Hono's validator and body parsing report a client's mistake as a plain HTTPException.
  if (status === 400) {
    return new ApiError("InvalidRequest", `Request body is not valid JSON: ${err.message}`);
  }
  if (status === 413) return bodyTooLarge(bodyLimitFor(path));
  if (status === 415) {
    return new ApiError("InvalidRequest", "The body must be JSON (Content-Type: application/json)");
  }
  logEvent("error", "request.failed", { method, path: path.slice(0, 200), ...errorFields(err) });
  return new ApiError("ServiceUnavailable", "The service failed to handle this request", {
    userMessage: "Something went wrong on our side. Please try again.",
  });
}

/**
 * Turns a zod failure into InvalidRequest (InvalidUrl when the link is the first problem),
 * naming every problem (edge/validation.ts).
 */
function validationHook(
  result: { success: boolean; error?: ZodError; target?: string; data?: unknown },
  c?: Context<AppEnv>,
) {
  if (result.success || !result.error) return;
  // A path id that is not a UUID names no job: the spec answers 404 for those, not 400.
  if (result.target === "param") {
    throw new ApiError("JobNotFound", "No job with that id (ids are UUIDs)", {
      userMessage: "We couldn't find that job.",
    });
  }
  const allowPrivate = c?.env && result.target === "json" ? allowsPrivateNetwork(c.env) : undefined;
  const serviceOrigin = c?.env ? publicBaseUrl(c.env, c.req.url) : undefined;
  throw validationError(result.error, result.data, allowPrivate, serviceOrigin);
}
