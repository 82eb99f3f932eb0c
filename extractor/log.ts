// One JSON line per event on stderr: easy to read locally, easy to ship from a container.
export type LogLevel = "debug" | "info" | "warn" | "error";

const quiet = process.env.EXTRACTOR_LOG === "silent";
const verbose = process.env.EXTRACTOR_LOG === "debug";

export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  if (quiet || (level === "debug" && !verbose)) return;
  const line = { time: new Date().toISOString(), level, message, ...fields };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}
