// Response declarations every route spreads, so the OpenAPI document lists each error the
// route can answer with, in the one error shape.
import { ErrorBodySchema } from "../../schema/api.ts";

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

export const AUTH_SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** Declared on the public operations, so tools can tell they need no credential on purpose. */
export const PUBLIC_SECURITY: Record<string, string[]>[] = [];
