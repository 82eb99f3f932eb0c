// The account's jobs as a table: a thumbnail of the first good frame, what was asked, status
// (with progress while it runs), frames, credits, each row one click from the job's frames;
// and the list's status tabs and search.

import type { Progress } from "../../../schema/api.ts";
import { CodeSamples, jobSamples } from "../../pages/code-samples.tsx";
import { JOB_TABS, type JobListRow, type JobTab } from "./data.ts";
import { count, When } from "./ui.tsx";

// A batch's statuses (running) and an item's (pending: waiting for room) share the badge.
const STATUS_LABELS: Record<string, string> = {
  pending: "Waiting",
  queued: "Queued",
  running: "Running",
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

/** The first good frame's thumbnail; decorative (alt=""), as its link is named by its text. */
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
      width={160}
      height={90}
      loading="lazy"
      decoding="async"
    />
  );
}

const RUNNING = new Set(["queued", "processing"]);

/**
 * A running job's progress: frames done of the total once the extractor reports them
 * (job.progress), an indeterminate bar before. The dashboard's script keeps it current.
 */
export function JobProgress(props: { status: string; progress?: Progress | null }) {
  const { progress } = props;
  const known = progress && progress.frames_total !== null && progress.frames_total > 0;
  const label = progressLabel(props.status, progress ?? null);
  return (
    <span class="job-progress" data-progress>
      {known ? (
        <progress
          max={progress.frames_total ?? 0}
          value={Math.min(progress.frames_done, progress.frames_total ?? 0)}
          aria-label={label}
        />
      ) : (
        <progress aria-label={label} />
      )}
      <span class="job-progress-label">{label}</span>
    </span>
  );
}

const STAGE_WORDS: Record<Progress["stage"], string> = {
  waiting: "Waiting for a slot",
  fetching: "Fetching the video",
  probing: "Reading the video",
  extracting: "Extracting",
  encoding: "Encoding",
  uploading: "Uploading",
  finishing: "Finishing",
};

/** "Extracting · 120 of 240 frames", "Queued", "Processing". */
export function progressLabel(status: string, progress: Progress | null): string {
  // A settled job keeps its last progress (decision 0230); its status says more.
  if (!progress || !RUNNING.has(status)) return STATUS_LABELS[status] ?? status;
  const stage = STAGE_WORDS[progress.stage] ?? progress.stage;
  if (progress.frames_total === null) {
    return progress.frames_done > 0 ? `${stage} · ${count(progress.frames_done)} frames` : stage;
  }
  return `${stage} · ${count(progress.frames_done)} of ${count(progress.frames_total)} frames`;
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
            <tr data-job-id={job.id} data-status={job.status}>
              <td class="job-video">
                <a href={`/dashboard/jobs/${job.id}`} title={job.url} class="job-link">
                  <Thumbnail job={job} />
                  <span class="job-link-text">{shortUrl(job.url)}</span>
                </a>
                <span class="hint job-options">{job.optionsLabel}</span>
              </td>
              <td data-label="Status">
                <StatusBadge status={job.status} />
                {RUNNING.has(job.status) && <JobProgress status={job.status} />}
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

const TAB_LABELS: Record<JobTab, string> = {
  all: "All",
  running: "Running",
  completed: "Completed",
  failed: "Failed",
  expired: "Expired",
};

/** The list's address for a tab and a search (page 1). */
export function jobsListHref(tab: JobTab, search: string | undefined, page = 1): string {
  const params = new URLSearchParams();
  if (tab !== "all") params.set("status", tab);
  if (search) params.set("q", search);
  if (page > 1) params.set("page", String(page));
  const query = params.toString();
  return query ? `/dashboard/jobs?${query}` : "/dashboard/jobs";
}

/** Status tabs, each with how many jobs it holds (within the search, if any). */
export function JobTabs(props: {
  current: JobTab;
  counts: Record<JobTab, number>;
  search: string | undefined;
}) {
  return (
    <nav class="job-tabs" aria-label="Jobs by status">
      <ul class="scroll-tabs">
        {JOB_TABS.map((tab) => (
          <li>
            <a
              href={jobsListHref(tab, props.search)}
              aria-current={tab === props.current ? "page" : undefined}
            >
              {TAB_LABELS[tab]} <span class="tab-count">{count(props.counts[tab])}</span>
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** Search by link or job id: a plain GET form, so a search is a link one can share. */
export function JobSearch(props: { tab: JobTab; search: string | undefined }) {
  return (
    <search>
      <form class="search-form job-search" method="get" action="/dashboard/jobs">
        {props.tab !== "all" && <input type="hidden" name="status" value={props.tab} />}
        <label for="job-search">Search by link or job id</label>
        <div class="search-row">
          <input
            id="job-search"
            name="q"
            type="search"
            value={props.search ?? ""}
            maxlength={200}
            placeholder="youtube.com/watch, 3f2a…"
            autocomplete="off"
          />
          <button type="submit" class="button-secondary">
            Search
          </button>
          {props.search && <a href={jobsListHref(props.tab, undefined)}>Clear</a>}
        </div>
      </form>
    </search>
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
