// Response declarations every route spreads, so the OpenAPI document lists each error the
// route can answer with, in the one error shape.
import { z } from "@hono/zod-openapi";
import { ErrorBodySchema } from "../../schema/api.ts";
import { BOOKMARK_HEADER, BOOKMARK_PATTERN } from "../storage/d1-sessions.ts";

const DESCRIPTIONS = {
  400: "Invalid request, unsupported or private video, or a plan limit exceeded",
  401: "Missing, malformed, unknown or revoked API key",
  402: "Not enough credits (InsufficientBalance)",
  404: "Not found (JobNotFound)",
  429: "Too many requests; Retry-After carries the seconds to wait",
  503: "The service is temporarily unavailable",
} as const;

type ErrorStatus = keyof typeof DESCRIPTIONS;

const RATE_HEADERS = {
  "X-RateLimit-Limit": {
    schema: { type: "integer" as const },
    description: "Requests allowed per window",
  },
  "X-RateLimit-Remaining": {
    schema: { type: "integer" as const },
    description: "Requests left now",
  },
  "X-RateLimit-Reset": {
    schema: { type: "integer" as const },
    description: "Seconds until the allowance is whole again",
  },
};

export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  const entries = [...statuses, 503 as const].map((status) => [
    status,
    {
      description: DESCRIPTIONS[status],
      headers:
        status === 429
          ? {
              ...RATE_HEADERS,
              "Retry-After": {
                schema: { type: "integer" as const },
                description: "Seconds to wait",
              },
            }
          : RATE_HEADERS,
      content: { "application/json": { schema: ErrorBodySchema } },
    },
  ]);
  return Object.fromEntries(entries) as Record<S | 503, ErrorResponse>;
}

type ErrorResponse = {
  description: string;
  headers: typeof RATE_HEADERS;
  content: { "application/json": { schema: typeof ErrorBodySchema } };
};

export function jsonResponse<T>(schema: T, description: string) {
  return { description, headers: RATE_HEADERS, content: { "application/json": { schema } } };
}

const BOOKMARK_RESPONSE_HEADER = {
  [BOOKMARK_HEADER]: {
    schema: { type: "string" as const },
    description:
      "Where in the database's history this answer was read. Send it back as the request header of the same name and later reads are served by a replica at least this new (your own writes included)",
  },
};

/** A response of a route that reads through a D1 session and answers with its bookmark. */
export function bookmarkedResponse<T>(schema: T, description: string) {
  const response = jsonResponse(schema, description);
  return { ...response, headers: { ...response.headers, ...BOOKMARK_RESPONSE_HEADER } };
}

/** The optional request header that carries a bookmark back (additive to the spec). */
export const BookmarkRequestHeaders = z.object({
  [BOOKMARK_HEADER.toLowerCase()]: z
    .string()
    .regex(BOOKMARK_PATTERN)
    .optional()
    .openapi({
      description: `The ${BOOKMARK_HEADER} of an earlier answer: read at least what it saw`,
      example: "00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683",
    }),
});

export const AUTH_SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** Declared on the public operations, so tools can tell they need no credential on purpose. */
export const PUBLIC_SECURITY: Record<string, string[]>[] = [];
