// One JSON line per event, as the extractor writes them (extractor/log.ts): `npm start` prints
// both sides' lines, `wrangler tail` shows the edge's in production. Every line about a job
// carries `job` and, once dispatched, `attempt`, so one `grep <job id>` follows the job from
// creation to its webhook across both processes.
//
// Steps of a job and their event names (both sides use these):
//   job.created · job.dispatched · source.resolved · video.probed · frames.decoded ·
//   files.stored · job.settled · webhook.delivered · webhook.retried
export type LogLevel = "debug" | "info" | "warn" | "error";

export interface LogFields {
  /** The request id (X-Request-Id) of the request that caused this line. */
  request?: string;
  job?: string;
  attempt?: string;
  [field: string]: unknown;
}

export function logEvent(level: LogLevel, event: string, fields: LogFields = {}): void {
  const line = JSON.stringify({
    time: new Date().toISOString(),
    level,
    side: "edge",
    event,
    ...fields,
  });
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}
