// One JSON line per event on stderr: easy to read locally, easy to ship from a container.
export type LogLevel = "debug" | "info" | "warn" | "error";

export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  const setting = process.env.EXTRACTOR_LOG;
  if (setting === "silent" || (level === "debug" && setting !== "debug")) return;
  const line = { time: new Date().toISOString(), level, message, ...fields };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}
