export type {
  Batch,
  BatchItem,
  BatchSummary,
  CreateBatchOptions,
  CreateBatchRequest,
} from "./batches.ts";
export { PRODUCTION_BASE_URL, Stills, type StillsOptions } from "./client.ts";
export type { DemoWaitOptions } from "./demo.ts";
export {
  StillsConnectionError,
  StillsError,
  StillsTimeoutError,
  StillsWebhookError,
} from "./errors.ts";
export type { DownloadedFile, DownloadOptions } from "./frames.ts";
export { frameFileName } from "./frames.ts";
export type { CreateOptions, GetOptions, JobPager, WaitOptions } from "./jobs.ts";
export type { components, operations, paths } from "./openapi.ts";
export type { Page, Pager } from "./pager.ts";
export type { RetryPolicy } from "./transport.ts";
export {
  type ApiErrorName,
  type CreateJobRequest,
  type DemoJob,
  type DemoRequest,
  type ErrorBody,
  type ErrorData,
  FINAL_STATUSES,
  type Frame,
  isFinal,
  type Job,
  type JobError,
  type JobList,
  type JobStatus,
  type ListJobsQuery,
  type Pricing,
  type Problem,
  type Usage,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookEvent,
} from "./types.ts";
export { VERSION } from "./version.ts";
export type { VerifyOptions, WebhookHeaders } from "./webhooks.ts";
