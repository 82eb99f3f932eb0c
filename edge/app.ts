// The app factory: validation errors and thrown errors are shaped once, here, for every
// route. Tests build the app the same way the worker does.
import { OpenAPIHono } from "@hono/zod-openapi";
import { drizzle } from "drizzle-orm/d1";
import type { Context } from "hono";
import type { ZodError } from "zod";
import type { AppEnv } from "./context.ts";
import { ApiError } from "./errors.ts";
import { applyRateHeaders } from "./middleware/rate-limit.ts";

export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

export function createApp() {
  const app = createRouter();
  app.use(async (c, next) => {
    c.set("db", drizzle(c.env.DB));
    c.set("clientIp", c.req.header("cf-connecting-ip") ?? "unknown");
    await next();
    applyRateHeaders(c);
  });
  app.onError((err, c) => errorResponse(err, c));
  app.notFound((c) =>
    errorResponse(new ApiError("JobNotFound", `No route for ${c.req.method} ${c.req.path}`), c),
  );
  return app;
}

function errorResponse(err: Error, c: Context<AppEnv>) {
  const apiError = err instanceof ApiError ? err : internalError(err, c.req.method, c.req.path);
  if (apiError.retryAfter !== undefined) c.header("Retry-After", String(apiError.retryAfter));
  const response = c.json(apiError.toBody(), apiError.status);
  applyRateHeaders(c, response);
  return response;
}

function internalError(err: Error, method: string, path: string): ApiError {
  // A malformed JSON body reaches here from the validator as a plain HTTPException.
  if ("status" in err && err.status === 400) {
    return new ApiError("InvalidRequest", `Request body is not valid JSON: ${err.message}`);
  }
  console.error(`unhandled error on ${method} ${path}`, err);
  return new ApiError("ServiceUnavailable", "The service failed to handle this request", {
    userMessage: "Something went wrong on our side. Please try again.",
  });
}

/** Turns a zod failure into InvalidRequest (InvalidUrl for the url field), naming the field. */
function validationHook(result: { success: boolean; error?: ZodError; target?: string }) {
  if (result.success || !result.error) return;
  // A path id that is not a UUID names no job: the spec answers 404 for those, not 400.
  if (result.target === "param") {
    throw new ApiError("JobNotFound", "No job with that id (ids are UUIDs)", {
      userMessage: "We couldn't find that job.",
    });
  }
  const issue = result.error.issues[0];
  const field = issue.path.join(".") || (issue.code === "unrecognized_keys" ? "" : "body");
  const unknown =
    issue.code === "unrecognized_keys" ? `unknown field(s): ${issue.keys.join(", ")}` : undefined;
  const message = unknown ?? `${field}: ${issue.message}`;
  const name = field === "url" ? "InvalidUrl" : "InvalidRequest";
  throw new ApiError(name, message, { userMessage: describeForUsers(name, message) });
}

function describeForUsers(name: "InvalidUrl" | "InvalidRequest", message: string): string {
  return name === "InvalidUrl"
    ? "That link doesn't look like a video URL we support."
    : `The request is not valid (${message}).`;
}
