// One JSON line per event on stderr: easy to read locally, easy to ship from a container. The
// edge writes the same shape (edge/log.ts), with the same step names, so one `grep <job id>`
// over `npm start`'s output follows a job through both processes.
//
// Fields that hold for a whole request or job (the request id, the job and attempt ids) are set
// once with withLogContext and added to every line written inside it, however deep
// (AsyncLocalStorage follows the call across awaits and callbacks).
import { AsyncLocalStorage } from "node:async_hooks";

export type LogLevel = "debug" | "info" | "warn" | "error";
/** EXTRACTOR_LOG: the lowest level written; "silent" writes nothing. */
export type LogSetting = "debug" | "info" | "silent";

export interface LogContext {
  /** The request id (X-Request-Id) of the edge request that caused this work. */
  request?: string;
  job?: string;
  attempt?: string;
  [field: string]: unknown;
}

const context = new AsyncLocalStorage<LogContext>();
let setting: LogSetting | undefined;

/** Set once at start from the parsed settings (extractor/config.ts, main.ts). */
export function setLogLevel(level: LogSetting): void {
  setting = level;
}

/**
 * Until main.ts sets the level (code run in-process by tests and tools), EXTRACTOR_LOG is read
 * once, on the first line written, with the same rule as extractor/config.ts.
 */
function currentSetting(): LogSetting {
  if (setting === undefined) {
    const given = process.env.EXTRACTOR_LOG;
    setting = given === "debug" || given === "silent" ? given : "info";
  }
  return setting;
}

/** Runs `fn` with `fields` added to every line it logs (nested contexts add to the outer one). */
export function withLogContext<T>(fields: LogContext, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

/** The current context's fields: the request id and job to pass on (e.g. to yt-dlp's logs). */
export function logContext(): LogContext {
  return { ...context.getStore() };
}

export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  const current = currentSetting();
  if (current === "silent" || (level === "debug" && current !== "debug")) return;
  const line = {
    time: new Date().toISOString(),
    level,
    side: "extractor",
    message,
    ...context.getStore(),
    ...fields,
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}
