// One JSON line per event, as the extractor writes them (extractor/log.ts): `npm start` prints
// both sides' lines, `wrangler tail` shows the edge's in production. Every line about a job
// carries `job` and, once dispatched, `attempt`, so one `grep <job id>` follows the job from
// creation to its webhook across both processes.
//
// Steps of a job and their event names (both sides use these):
//   job.created · job.dispatched · source.resolved · video.probed · frames.decoded ·
//   files.stored · job.settled · webhook.delivered · webhook.retried
//
// Fields that hold for a whole request or queue message (the request id, the job) are set once
// with withLogContext and added to every line written inside it, however deep: AsyncLocalStorage
// (wrangler.toml's nodejs_compat) follows the call across awaits, so no call has to pass them.
import { AsyncLocalStorage } from "node:async_hooks";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface LogFields {
  /** The request id (X-Request-Id) of the request that caused this line. */
  request?: string;
  job?: string;
  attempt?: string;
  [field: string]: unknown;
}

const context = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to every line it logs (nested contexts add to the outer one). */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

/** The fields of the current context: the request id a handler passes on to the extractor. */
export function logContext(): LogFields {
  return { ...context.getStore() };
}

export function logEvent(level: LogLevel, event: string, fields: LogFields = {}): void {
  const line = JSON.stringify({
    time: new Date().toISOString(),
    level,
    side: "edge",
    event,
    ...context.getStore(),
    ...fields,
  });
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}

/** An error as log fields: its message, and its stack where it has one. */
export function errorFields(error: unknown): { error: string; stack?: string } {
  if (error instanceof Error) return { error: error.message, stack: error.stack };
  return { error: String(error) };
}
