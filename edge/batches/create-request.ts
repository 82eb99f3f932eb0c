// A batch's stored options and the job request each of its items makes of them.
import type { CreateJobRequest } from "../../schema/api.ts";
import type { CreateBatchRequest } from "../../schema/batches.ts";

/** The job options a batch's items share: the request without its links. */
export type BatchOptions = Omit<CreateBatchRequest, "urls" | "url">;

/** One item's job request: the batch's options with the item's link. */
export function itemJobRequest(options: BatchOptions, url: string): CreateJobRequest {
  return { ...options, url } as CreateJobRequest;
}
