// What a job's page shows beyond its frames for the modes and options of issues 38 and 39: a
// token budget's choice, the slides' spans and repeats, the best frames' scores and the
// animated preview. jobs.tsx only places it.
// No script and no inline style (the dashboard's CSP): a table, and the preview as an <img>,
// which browsers play and loop by themselves.
import type { JobBudget, ScoreParts } from "../../../schema/api.ts";
import type { readJob } from "../../jobs/read.ts";

type Job = Awaited<ReturnType<typeof readJob>>;
type Frame = Job["frames"][number];

const PART_NAMES: [keyof ScoreParts, string][] = [
  ["sharpness", "Sharpness"],
  ["exposure", "Exposure"],
  ["contrast", "Contrast"],
  ["colourfulness", "Colour"],
  ["interest", "Interest"],
];

export function JobExtras(props: { job: Job }) {
  const { job } = props;
  const scored = job.frames.filter((frame) => frame.score != null);
  const slides = job.frames.filter((frame) => frame.slide != null);
  return (
    <>
      {job.budget && <Budget budget={job.budget} />}
      {slides.length > 0 && <Slides frames={slides} />}
      {scored.length > 0 && <BestFrames frames={scored} />}
      {job.animated && <AnimatedPreview preview={job.animated} />}
    </>
  );
}

const score = (value: number | null | undefined) => (value == null ? "–" : value.toFixed(2));
const seconds = (value: number) => `${Number(value.toFixed(3))} s`;

const tokens = (value: number) => value.toLocaleString("en-US");

/** A token budget: what it chose and what the delivered frames cost, by the family's rule. */
function Budget(props: { budget: JobBudget }) {
  const { budget } = props;
  const measured = budget.tokens_estimated != null && budget.frames != null;
  return (
    <section aria-labelledby="budget-title">
      <h2 id="budget-title">Token budget</h2>
      <p class="muted">
        Stills chose how many frames and how wide, to fit the budget under the {budget.model} rule;
        see the <a href="/docs/budgets">guide</a>.
      </p>
      <dl class="facts facts-compact">
        <div>
          <dt>Budget</dt>
          <dd>
            {tokens(budget.tokens)} tokens ({budget.model})
          </dd>
        </div>
        <div>
          <dt>Frames cost</dt>
          <dd>
            {measured
              ? `${tokens(budget.tokens_estimated ?? 0)} tokens: ${budget.frames} × ${tokens(budget.per_frame ?? 0)}`
              : "measured when the job completes"}
          </dd>
        </div>
        {budget.width != null && budget.height != null && (
          <div>
            <dt>Frame size</dt>
            <dd>
              {budget.width} × {budget.height} px
            </dd>
          </div>
        )}
      </dl>
    </section>
  );
}

/** best mode: the frames in the order delivered (best first), each score beside its parts. */
function BestFrames(props: { frames: Frame[] }) {
  return (
    <section aria-labelledby="best-title">
      <h2 id="best-title">Best frames</h2>
      <p class="muted">
        Best first. Each score (0 to 1) is the weighted mean of its parts; see the{" "}
        <a href="/docs/best-frames">guide</a>.
      </p>
      <div class="table-scroll">
        <table class="stack-table">
          <caption class="sr-only">Best frames and their scores, best first</caption>
          <thead>
            <tr>
              <th scope="col">Frame</th>
              <th scope="col">Time</th>
              <th scope="col">Score</th>
              {PART_NAMES.map(([, name]) => (
                <th scope="col">{name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.frames.map((frame) => (
              <tr>
                <td data-label="Frame">
                  {frame.url ? <a href={frame.url}>#{frame.index}</a> : `#${frame.index}`}
                </td>
                <td data-label="Time">{seconds(frame.timestamp)}</td>
                <td data-label="Score">
                  <strong>{score(frame.score)}</strong>
                </td>
                {PART_NAMES.map(([part, name]) => (
                  <td data-label={name}>{score(frame.score_parts?.[part])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** slides mode: each slide's time on screen, and which frame it shows again. */
function Slides(props: { frames: Frame[] }) {
  return (
    <section aria-labelledby="slides-title">
      <h2 id="slides-title">Slides</h2>
      <p class="muted">
        One frame each time the picture settled on new content, in time order; see the{" "}
        <a href="/docs/slides">guide</a>.
      </p>
      <div class="table-scroll">
        <table class="stack-table">
          <caption class="sr-only">Slides, when each was on screen, and repeats</caption>
          <thead>
            <tr>
              <th scope="col">Frame</th>
              <th scope="col">On screen</th>
              <th scope="col">Shown again</th>
            </tr>
          </thead>
          <tbody>
            {props.frames.map((frame) => (
              <tr>
                <td data-label="Frame">
                  {frame.url ? <a href={frame.url}>#{frame.index}</a> : `#${frame.index}`}
                </td>
                <td data-label="On screen">
                  {frame.slide
                    ? `${seconds(frame.slide.start)} to ${seconds(frame.slide.end)}`
                    : "–"}
                </td>
                <td data-label="Shown again">
                  {frame.slide?.repeat_of != null
                    ? `repeats #${frame.slide.repeat_of}`
                    : "first showing"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function AnimatedPreview(props: { preview: NonNullable<Job["animated"]> }) {
  const { preview } = props;
  const what = `${preview.format === "gif" ? "GIF" : "WebP"}, ${preview.frames} pictures at ${preview.fps} fps, ${seconds(preview.duration)} from ${seconds(preview.start)}, ${preview.width}×${preview.height}, ${kilobytes(preview.bytes)}`;
  return (
    <section aria-labelledby="animated-title">
      <h2 id="animated-title">Moving preview</h2>
      {preview.url ? (
        <div class="moving-preview">
          <a href={preview.url} class="storyboard">
            <img
              src={preview.url}
              alt={`Moving preview of the video from ${seconds(preview.start)}, looping`}
              width={preview.width}
              height={preview.height}
              loading="lazy"
              decoding="async"
            />
          </a>
          <p class="muted reduced-motion-note">
            Your system asks for less motion, so the preview is not played here:{" "}
            <a href={preview.url}>open the moving preview</a>.
          </p>
        </div>
      ) : (
        <p class="muted">The preview's file has expired.</p>
      )}
      <p class="muted">{what}.</p>
    </section>
  );
}

function kilobytes(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}
