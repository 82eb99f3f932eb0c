// What makes two of an account's jobs ask for the same frames (decisions 0350, 0384): the same
// options, all but where the result is told (`webhook_url`) and `reuse` itself, written as
// canonical JSON so equal values always give equal text. The edge hashes it into a job's
// options key; the extractor uses it to hold an identical job back while its twin runs.
import type { JobOptions } from "./messages.ts";

/** Options that do not change a single delivered byte. */
const OPTIONS_NOT_IN_KEY = new Set<string>(["webhook_url", "reuse"]);

/** The options that shape the frames. */
export function shapingOptions(options: JobOptions): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(options).filter(([name]) => !OPTIONS_NOT_IN_KEY.has(name)),
  );
}

/** JSON with every object's keys sorted (undefined ones left out). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
