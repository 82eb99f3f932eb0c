// A job's status values as named constants, typed from the API's one list (schema/api.ts), so
// no module writes a status as a bare SQL literal. Only edge/jobs/lifecycle.ts changes a status.
import { JOB_STATUSES } from "./api.ts";

export type JobStatus = (typeof JOB_STATUSES)[number];

function status<S extends JobStatus>(value: S): S {
  if (!JOB_STATUSES.includes(value)) throw new Error(`unknown job status ${value}`);
  return value;
}

export const QUEUED = status("queued");
export const PROCESSING = status("processing");
export const COMPLETED = status("completed");
export const FAILED = status("failed");
export const EXPIRED = status("expired");

/** Not settled yet: the statuses an attempt may still move between. */
export const UNSETTLED_STATUSES = [QUEUED, PROCESSING] as const;
/** Nothing changes a job in these but expiry (completed → expired). */
export const FINAL_STATUSES = [COMPLETED, FAILED, EXPIRED] as const;

export function isFinalStatus(value: string): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(value);
}
