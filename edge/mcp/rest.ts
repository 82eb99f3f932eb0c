// Tools whose REST handler has no exported function behind it (GET /v1/usage, POST /v1/demo)
// call the REST route itself, in-process, through an app built exactly as the worker's: the
// answer is the REST answer by construction, and no logic is copied here. The caller's
// credential and address go along, so the route sees the same account and the same per-IP
// allowance. (The price: such a call is counted twice by the rate limiter.)
import type { Context, ExecutionContext as HonoExecutionContext } from "hono";
import { API_ERROR_NAMES, type ApiErrorName } from "../../schema/api.ts";
import { createApp } from "../app.ts";
import type { AppEnv } from "../context.ts";
import type { ErrorBody } from "../errors.ts";
import { ApiError } from "../errors.ts";
import { v1Router } from "../routes/v1.ts";

const restApp = createApp().route("/", v1Router);

const FORWARDED = ["authorization", "x-api-key", "cf-connecting-ip"];

export async function callRest<T>(
  c: Context<AppEnv>,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<T> {
  const headers = new Headers({ accept: "application/json" });
  for (const name of FORWARDED) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  if (body !== undefined) headers.set("content-type", "application/json");
  const response = await restApp.fetch(
    new Request(new URL(path, c.req.url), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    c.env,
    executionContextOf(c),
  );
  const json = (await response.json()) as T | ErrorBody;
  if (response.ok) return json as T;
  throw asApiError(json as ErrorBody, response.headers.get("retry-after"));
}

function asApiError(body: ErrorBody, retryAfter: string | null): ApiError {
  const name = (API_ERROR_NAMES as readonly string[]).includes(body.data?.name)
    ? (body.data.name as ApiErrorName)
    : "ServiceUnavailable";
  return new ApiError(name, body.message, {
    userMessage: body.data?.userMessage,
    reason: body.data?.reason,
    retryAfter: retryAfter === null ? undefined : Number(retryAfter),
  });
}

function executionContextOf(c: Context<AppEnv>): HonoExecutionContext | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}
