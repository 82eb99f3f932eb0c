// The account's jobs: the whole list, page by page, and one job with its frames.
import { JobIdParamSchema } from "../../../schema/api.ts";
import { ApiError } from "../../errors.ts";
import { readJob } from "../../jobs/read.ts";
import { jobsWithThumbnails } from "./data.ts";
import { JobTable, NoJobsYet, StatusBadge } from "./job-list.tsx";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, Notice, Pager, pageNumber, renderPage, When } from "./ui.tsx";

const PAGE_SIZE = 20;

type Job = Awaited<ReturnType<typeof readJob>>;

export async function jobsPage(c: PageContext) {
  const account = c.get("account");
  const page = pageNumber(c.req.query("page"));
  const list = await jobsWithThumbnails(c, account.id, PAGE_SIZE, (page - 1) * PAGE_SIZE);
  const body = (
    <DashboardPage title="Jobs" section="/dashboard/jobs" email={account.email}>
      {list.total === 0 ? (
        <NoJobsYet origin={new URL(c.req.url).origin} />
      ) : (
        <>
          <p class="muted">
            {count(list.total)} {list.total === 1 ? "job" : "jobs"}, newest first. Frames can be
            downloaded until the job expires (your plan's retention).
          </p>
          <JobTable jobs={list.rows} caption="Jobs" />
          <Pager path="/dashboard/jobs" page={page} pageSize={PAGE_SIZE} total={list.total} />
        </>
      )}
    </DashboardPage>
  );
  return renderPage(c, body);
}

export async function jobPage(c: PageContext) {
  const account = c.get("account");
  const id = JobIdParamSchema.safeParse({ id: c.req.param("id") });
  let job: Job | undefined;
  try {
    if (id.success) job = await readJob(c, id.data.id, false);
  } catch (err) {
    if (!(err instanceof ApiError && err.apiName === "JobNotFound")) throw err;
  }
  if (!job) {
    const missing = (
      <DashboardPage title="Job not found" section="/dashboard/jobs" email={account.email}>
        <p>This account has no job with that id.</p>
        <p>
          <a href="/dashboard/jobs">All jobs</a>
        </p>
      </DashboardPage>
    );
    return renderPage(c, missing, 404);
  }
  return renderPage(
    c,
    <DashboardPage
      title={`Job: ${videoName(job.url)}`}
      section="/dashboard/jobs"
      email={account.email}
    >
      <JobDetails job={job} />
    </DashboardPage>,
  );
}

/** What a person calls the video: its file name, or its host for a page link. */
function videoName(url: string): string {
  try {
    const parsed = new URL(url);
    const last = parsed.pathname.split("/").filter(Boolean).at(-1);
    return decodeURIComponent(last ?? parsed.hostname).slice(0, 60);
  } catch {
    return "video";
  }
}

function JobDetails(props: { job: Job }) {
  const { job } = props;
  const ok = job.frames.filter((frame) => frame.status === "ok");
  return (
    <>
      <p>
        <a href="/dashboard/jobs">← All jobs</a>
      </p>
      <dl class="facts">
        <div class="fact-wide">
          <dt>Video</dt>
          <dd class="break">{job.url}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={job.status} />
          </dd>
        </div>
        <div>
          <dt>Frames</dt>
          <dd>
            {job.frames_count === null ? "—" : count(job.frames_count - job.frames_failed)}
            {job.frames_failed > 0 && <span class="hint">{job.frames_failed} failed</span>}
          </dd>
        </div>
        <div>
          <dt>Credits</dt>
          <dd>{job.credits_charged === null ? "—" : count(job.credits_charged)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <When iso={job.created_at} />
          </dd>
        </div>
        <div>
          <dt>Files until</dt>
          <dd>
            <When iso={job.expires_at} />
          </dd>
        </div>
        <div class="fact-wide">
          <dt>Job id</dt>
          <dd>
            <code>{job.id}</code>
          </dd>
        </div>
      </dl>
      {job.error && <Notice kind="error">{job.error.userMessage}</Notice>}
      {job.notice && <p class="muted">{job.notice}</p>}
      {job.zip_url && (
        <p>
          <a class="button button-secondary" href={job.zip_url}>
            Download the ZIP{job.zip_bytes ? ` (${(job.zip_bytes / 1_048_576).toFixed(1)} MB)` : ""}
          </a>
        </p>
      )}
      <h2>Frames</h2>
      {job.frames.length === 0 ? (
        <p class="muted">
          {job.status === "queued" || job.status === "processing"
            ? "The job is still running: reload in a moment."
            : "No frames to show."}
        </p>
      ) : (
        <ul class="frame-grid">
          {job.frames.map((frame) => (
            <li class="frame">
              {frame.url ? (
                <a href={frame.url}>
                  <img
                    src={frame.url}
                    alt={`Frame ${frame.index} at ${frame.timestamp} s`}
                    width={job.width ?? 160}
                    height={job.height ?? 90}
                    loading="lazy"
                    decoding="async"
                  />
                </a>
              ) : (
                <span class="frame-missing">{frame.status === "ok" ? "expired" : "no frame"}</span>
              )}
              <span class="frame-caption">
                #{frame.index} · {frame.timestamp} s
                {frame.error && <span class="hint">{frame.error}</span>}
              </span>
            </li>
          ))}
        </ul>
      )}
      {ok.length > 0 && (
        <p class="muted">
          Each frame opens full size; its link is signed and works until{" "}
          <When iso={job.expires_at} />.
        </p>
      )}
    </>
  );
}
