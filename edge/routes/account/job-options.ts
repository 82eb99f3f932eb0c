// What a job asked for, as people read it: a one-line label for the jobs list ("count 6 · jpg ·
// 720p"), the same options one by one for the job's page, and the curl that asks for them
// again. All read the job's stored options (normalised, defaults filled: schema/messages.ts).
import { CreateJobRequestSchema } from "../../../schema/api.ts";

/** A job's options as the API answers them (Job.options): a free-form object. */
type Options = Record<string, unknown>;

const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;
const plural = (n: number, word: string) =>
  `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;

/** Seconds as a moment in a video: 0:05, 1:02:03, 0:07.5 (fractions kept). */
export function moment(seconds: number): string {
  const whole = Math.floor(seconds);
  const fraction = Number((seconds - whole).toFixed(3));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = `${String(whole % 60).padStart(2, "0")}${fraction > 0 ? String(fraction).slice(1) : ""}`;
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** What the job extracts: "every 5 s", "count 6", "3 timestamps", "scenes, up to 20". */
function modePart(options: Options): string {
  const count = num(options.count);
  // A token budget picks the count (decision 0311): say so instead of a number.
  const tokens = num((options.budget as Options | undefined)?.tokens);
  const fit = tokens === undefined ? undefined : `to fit ${plural(tokens, "token")}`;
  switch (options.mode) {
    case "interval":
      return `every ${num(options.every) ?? 1} s`;
    case "count":
      return `count ${count ?? fit ?? "?"}`;
    case "timestamps":
      return plural(Array.isArray(options.timestamps) ? options.timestamps.length : 0, "timestamp");
    case "scenes":
    case "keyframes":
    case "slides":
      if (count !== undefined) return `${options.mode}, up to ${count}`;
      return fit === undefined ? options.mode : `${options.mode}, ${fit}`;
    case "best":
      return `best ${count ?? fit ?? 1}`;
    case "live":
      return options.every === undefined
        ? "live, latest frame"
        : `live, every ${num(options.every)} s for ${num(options.duration)} s`;
    default:
      return typeof options.mode === "string" ? options.mode : "frames";
  }
}

function rangePart(options: Options): string | null {
  const start = num(options.start);
  const end = num(options.end);
  if (start === undefined && end === undefined) return null;
  return `${moment(start ?? 0)}–${end === undefined ? "end" : moment(end)}`;
}

const OUTPUT_WORDS: Record<string, string> = { zip: "ZIP", both: "URLs + ZIP" };

/** The parts of the label, in order; the label joins them with " · ". */
export function optionsParts(options: Options): string[] {
  const parts = [modePart(options)];
  const range = rangePart(options);
  if (range) parts.push(range);
  if (typeof options.format === "string") parts.push(options.format);
  if (options.resolution !== undefined) parts.push(`${options.resolution}p`);
  const maxWidth = num(options.max_width);
  if (maxWidth !== undefined) parts.push(`≤ ${maxWidth} px wide`);
  if (typeof options.output === "string" && OUTPUT_WORDS[options.output]) {
    parts.push(OUTPUT_WORDS[options.output]);
  }
  if (options.mode === "scenes" && num(options.sensitivity) !== undefined) {
    parts.push(`sensitivity ${options.sensitivity}`);
  }
  if (Array.isArray(options.skip) && options.skip.length > 0) {
    parts.push(`skip ${options.skip.join(", ")}`);
  }
  if (options.storyboard === true) parts.push("storyboard");
  const animated = options.animated as Options | undefined;
  if (animated && typeof animated === "object") {
    parts.push(
      `moving preview (${typeof animated.format === "string" ? animated.format : "webp"})`,
    );
  }
  if (options.captions === true) {
    parts.push(
      typeof options.captions_language === "string"
        ? `captions (${options.captions_language})`
        : "captions",
    );
  }
  if (typeof options.webhook_url === "string") parts.push("webhook");
  return parts;
}

/** "count 6 · jpg · 720p", "scenes · jpg · 1080p · storyboard". */
export function optionsLabel(options: Options): string {
  return optionsParts(options).join(" · ");
}

/**
 * The body of POST /v1/jobs that asks for these options again: the link and every stored
 * option the request takes (an option the request does not know is left out, so the body is
 * always one the API accepts).
 */
export function createBodyFor(url: string, options: Options): Record<string, unknown> {
  const accepted = new Set(Object.keys(CreateJobRequestSchema.shape));
  const body: Record<string, unknown> = { url };
  for (const [name, value] of Object.entries(options)) {
    if (accepted.has(name) && name !== "url" && name !== "wait" && value !== undefined) {
      body[name] = value;
    }
  }
  return body;
}

/** A word for a POSIX shell: single-quoted, a quote inside written as '\''. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * A curl that creates the same job again with the key in $STILLS_API_KEY: what a person pastes
 * into a terminal, or into a ticket.
 */
export function curlCommand(origin: string, url: string, options: Options): string {
  const endpoint = `${origin.replace(/\/+$/, "")}/v1/jobs`;
  return [
    `curl -s -X POST ${shellQuote(endpoint)}`,
    `  -H "Authorization: Bearer $STILLS_API_KEY"`,
    `  -H 'content-type: application/json'`,
    `  -d ${shellQuote(JSON.stringify(createBodyFor(url, options)))}`,
  ].join(" \\\n");
}
