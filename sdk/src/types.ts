// The API's shapes as the SDK hands them out: names over the generated OpenAPI types, so every
// field stays what the served document says (sdk/src/openapi.ts, checked against it in tests).
import type { components, operations } from "./openapi.ts";

type Schemas = components["schemas"];

export type Job = Schemas["Job"];
export type Frame = Schemas["Frame"];
export type JobError = Schemas["JobError"];
export type JobList = Schemas["JobList"];
export type DemoJob = Schemas["DemoJob"];
export type Usage = Schemas["Usage"];
export type Pricing = Schemas["Pricing"];
export type CreateJobRequest = Schemas["CreateJobRequest"];
export type DemoRequest = Schemas["DemoRequest"];
export type BudgetRequest = Schemas["BudgetRequest"];
export type JobBudget = Schemas["JobBudget"];
export type ErrorBody = Schemas["Error"];
export type ErrorData = ErrorBody["data"];
export type ApiErrorName = ErrorData["name"];
export type Problem = Schemas["Problem"];
export type JobStatus = Job["status"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookDeliveryList = Schemas["WebhookDeliveryList"];
export type ListJobsQuery = NonNullable<operations["listJobs"]["parameters"]["query"]>;

/** Statuses a job never leaves. */
export const FINAL_STATUSES: readonly JobStatus[] = ["completed", "failed", "expired"];

export function isFinal(job: { status: JobStatus }): boolean {
  return FINAL_STATUSES.includes(job.status);
}

/** The body of a webhook delivery (Standard Webhooks), after its signature was checked. */
export type WebhookEvent =
  | { type: "job.completed"; timestamp: string; data: Job }
  | { type: "job.failed"; timestamp: string; data: Job }
  /** A batch's items have all ended (POST /v1/batches); data is the batch without its items. */
  | { type: "batch.completed"; timestamp: string; data: Schemas["BatchSummary"] }
  /** Sent from the dashboard's "Send a test event". */
  | {
      type: "webhook.test";
      timestamp: string;
      data: { object: "webhook_test"; id: string; message: string };
    };
