// What a job asked for, on its page: its options one by one, the curl that asks for them again
// (key in $STILLS_API_KEY), and the API's own answer for the job (GET /v1/jobs/{id}'s body, from
// the same reader and serializer the API uses: edge/jobs/read.ts readJob).
import type { readJob } from "../../jobs/read.ts";
import { CopyableCode } from "../../pages/copyable-code.tsx";
import { curlCommand, moment } from "./job-options.ts";

type Job = Awaited<ReturnType<typeof readJob>>;

const MODE_WORDS: Record<string, string> = {
  interval: "A frame every N seconds",
  count: "N frames spread evenly",
  timestamps: "Frames at given moments",
  scenes: "One frame per shot change",
  keyframes: "The stream's keyframes",
  best: "The best-looking frames, best first",
  slides: "One frame per slide shown",
  live: "Frames of a live stream as it plays",
};

const OUTPUT_WORDS: Record<string, string> = {
  urls: "a URL per frame",
  zip: "one ZIP",
  both: "a URL per frame and one ZIP",
};

/** The options as term/value pairs, in the order a request lists them. */
export function askedFacts(options: Record<string, unknown>): [string, string][] {
  const facts: [string, string][] = [];
  const mode = String(options.mode ?? "");
  facts.push(["Mode", `${mode}${MODE_WORDS[mode] ? ` (${MODE_WORDS[mode]})` : ""}`]);
  if (options.every !== undefined) facts.push(["Every", `${options.every} s`]);
  if (options.duration !== undefined) facts.push(["Watch for", `${options.duration} s`]);
  if (options.count !== undefined) {
    facts.push([mode === "count" ? "Count" : "At most", String(options.count)]);
  }
  if (Array.isArray(options.timestamps)) {
    const shown = options.timestamps.slice(0, 12).map((t) => `${t} s`);
    const more = options.timestamps.length - shown.length;
    facts.push(["Timestamps", `${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`]);
  }
  if (typeof options.start === "number" || typeof options.end === "number") {
    const start = typeof options.start === "number" ? moment(options.start) : "0:00";
    const end = typeof options.end === "number" ? moment(options.end) : "the end";
    facts.push(["Range", `${start} to ${end}`]);
  }
  if (options.sensitivity !== undefined) facts.push(["Sensitivity", String(options.sensitivity)]);
  if (Array.isArray(options.skip)) facts.push(["Skip", options.skip.join(", ")]);
  facts.push(["Format", String(options.format ?? "jpg")]);
  facts.push(["Resolution", `${options.resolution ?? 1080}p`]);
  if (options.max_width !== undefined) facts.push(["Max width", `${options.max_width} px`]);
  facts.push(["Output", OUTPUT_WORDS[String(options.output)] ?? String(options.output)]);
  const budget = options.budget as Record<string, unknown> | undefined;
  if (budget && typeof budget === "object") {
    facts.push([
      "Token budget",
      `${Number(budget.tokens).toLocaleString("en-US")} tokens for ${String(budget.model)} (Stills picks the count and width)`,
    ]);
  }
  if (options.text === true) {
    const languages = Array.isArray(options.text_languages) ? options.text_languages : ["en"];
    facts.push(["Text on screen", `read (${languages.join(", ")})`]);
  }
  if (options.storyboard === true) facts.push(["Storyboard", "yes"]);
  const animated = options.animated as Record<string, unknown> | undefined;
  if (animated && typeof animated === "object") {
    const start =
      typeof animated.start === "number" ? `from ${moment(animated.start)}` : "at the best moment";
    facts.push([
      "Moving preview",
      `${String(animated.format ?? "webp")}, ${String(animated.duration ?? 3)} s ${start}, ${String(animated.fps ?? 10)} fps, ${String(animated.width ?? 480)} px wide`,
    ]);
  }
  if (options.captions === true) {
    facts.push(["Captions", options.captions_language ? String(options.captions_language) : "yes"]);
  }
  if (typeof options.webhook_url === "string") facts.push(["Webhook", options.webhook_url]);
  return facts;
}

/** The request, again: options, curl and JSON, each folded until asked for. */
export function JobAsked(props: { job: Job; origin: string }) {
  const { job } = props;
  const curl = curlCommand(props.origin, job.url, job.options);
  return (
    <section aria-labelledby="asked-title" class="job-asked">
      <h2 id="asked-title">What was asked</h2>
      <dl class="facts facts-compact">
        {askedFacts(job.options).map(([term, value]) => (
          <div class={term === "Webhook" || term === "Timestamps" ? "fact-wide" : undefined}>
            <dt>{term}</dt>
            <dd class="break">{value}</dd>
          </div>
        ))}
      </dl>
      <details class="job-request">
        <summary>Copy as curl</summary>
        <p class="hint">
          The same job again, with your key in <code>STILLS_API_KEY</code>.
        </p>
        <CopyableCode id="job-curl" label="curl command">
          {curl}
        </CopyableCode>
      </details>
      <details class="job-request">
        <summary>View JSON</summary>
        <p class="hint">
          What <code>GET /v1/jobs/{job.id}</code> answers now. Frame links are signed and work until
          the job expires.
        </p>
        <CopyableCode id="job-json" label="JSON">
          {JSON.stringify(job, null, 2)}
        </CopyableCode>
      </details>
    </section>
  );
}
