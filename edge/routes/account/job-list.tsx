// The account's jobs as a table: a thumbnail of the first good frame, status, frames, credits,
// each row one click from the job's frames.
import { CodeSamples, jobSamples } from "../../pages/code-samples.tsx";
import type { JobListRow } from "./data.ts";
import { count, When } from "./ui.tsx";

const STATUS_LABELS: Record<string, string> = {
  queued: "Queued",
  processing: "Processing",
  completed: "Completed",
  failed: "Failed",
  expired: "Expired",
};

export function StatusBadge(props: { status: string }) {
  return (
    <span class={`status status-${props.status}`}>
      {STATUS_LABELS[props.status] ?? props.status}
    </span>
  );
}

/** The video's address, shortened for a table cell (the whole is in the title). */
function shortUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname.length > 28 ? `…${parsed.pathname.slice(-27)}` : parsed.pathname;
    return `${parsed.hostname}${path}`;
  } catch {
    return url.slice(0, 40);
  }
}

/** The first good frame; decorative (alt=""), as the link it sits in is named by its text. */
function Thumbnail(props: { job: JobListRow }) {
  const { job } = props;
  if (!job.thumbnailUrl) {
    return (
      <span class="thumb thumb-empty" aria-hidden="true">
        —
      </span>
    );
  }
  return (
    <img
      class="thumb"
      src={job.thumbnailUrl}
      alt=""
      width={job.width ?? 160}
      height={job.height ?? 90}
      loading="lazy"
      decoding="async"
    />
  );
}

export function JobTable(props: { jobs: JobListRow[]; caption: string }) {
  return (
    <div class="table-scroll">
      <table class="jobs-table stack-table">
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Video</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Frames
            </th>
            <th scope="col" class="num">
              Credits
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {props.jobs.map((job) => (
            <tr>
              <td class="job-video">
                <a href={`/dashboard/jobs/${job.id}`} title={job.url} class="job-link">
                  <Thumbnail job={job} />
                  <span>{shortUrl(job.url)}</span>
                </a>
                <span class="hint">{job.platform}</span>
              </td>
              <td data-label="Status">
                <StatusBadge status={job.status} />
              </td>
              <td class="num" data-label="Frames">
                {job.framesCount === null ? "—" : count(job.framesCount - job.framesFailed)}
                {job.framesFailed > 0 && <span class="hint">{job.framesFailed} failed</span>}
              </td>
              <td class="num" data-label="Credits">
                {job.creditsCharged === null ? "—" : count(job.creditsCharged)}
              </td>
              <td data-label="Created">
                <When iso={job.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function NoJobsYet(props: { origin: string }) {
  return (
    <div class="empty-state">
      <p>
        <strong>No jobs yet.</strong> <a href="/dashboard/keys">Create an API key</a>, put it in the
        environment variable <code>STILLS_API_KEY</code>, and ask for six frames of our sample
        video:
      </p>
      <CodeSamples
        id="first-job"
        label="First job"
        samples={jobSamples({ origin: props.origin })}
      />
      <p>
        Then swap in your own video link. Every option is in the <a href="/docs">API reference</a>.
      </p>
    </div>
  );
}
