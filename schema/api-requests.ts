// An account's recent API requests (issue 36, decision 0250): what the dashboard's Requests page
// lists, one entry per request made with one of the account's keys. Bounded in rows and days.

/** The newest requests kept per account. */
export const API_REQUESTS_KEPT = 1000;
/** Requests older than this are pruned by the cron. */
export const API_REQUEST_DAYS = 7;
/** Longest request id searched for (X-Request-Id is at most 128 characters, edge/app.ts). */
export const REQUEST_ID_MAX = 128;

/** One request as the dashboard shows it. */
export interface ApiRequestEntry {
  /** X-Request-Id answered to the request (the caller's own when it sent a sane one). */
  request_id: string;
  method: string;
  /** The route's pattern in the API document's spelling (`/v1/jobs/{id}`), never the path sent. */
  route: string;
  status: number;
  /** The error's `data.name` when the answer was an error (JobNotFound, InvalidRequest …). */
  error: string | null;
  latency_ms: number;
  /** When the request arrived. */
  created_at: string;
}

/** Hono's route path (`/v1/jobs/:id`) in the OpenAPI document's spelling (`/v1/jobs/{id}`). */
export function routePattern(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g, "{$1}");
}
