// The account's jobs: the list (status tabs, search by link or id, pages) and one job's page
// (what was asked, progress while it runs, its frames). Both update themselves while a job runs
// (the dashboard's script polls /dashboard/jobs/live, decision 0241).
import { JobIdParamSchema } from "../../../schema/api.ts";
import { isFinalStatus } from "../../../schema/job-status.ts";
import { ApiError } from "../../errors.ts";
import { readJob } from "../../jobs/read.ts";
import { accountReaderOf, baseUrl } from "../../request.ts";
import {
  frameThumbnails,
  JOB_TABS,
  type JobTab,
  jobRequestId,
  jobsWithThumbnails,
  jobTabCounts,
} from "./data.ts";
import { JobAsked } from "./job-asked.tsx";
import { JobExtras } from "./job-extras.tsx";
import { JobFailure } from "./job-failure.tsx";
import { FrameGallery } from "./job-gallery.tsx";
import {
  JobProgress,
  JobSearch,
  JobTable,
  JobTabs,
  jobsListHref,
  NoJobsYet,
  StatusBadge,
} from "./job-list.tsx";
import { optionsLabel } from "./job-options.ts";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, notFoundPage, Pager, pageNumber, renderPage, When } from "./ui.tsx";

const PAGE_SIZE = 20;

type Job = Awaited<ReturnType<typeof readJob>>;

/** The list's tab from `?status=` (anything else is All). */
function tabFrom(raw: string | undefined): JobTab {
  return (JOB_TABS as readonly string[]).includes(raw ?? "") ? (raw as JobTab) : "all";
}

/** The search from `?q=`, trimmed and bounded. */
function searchFrom(raw: string | undefined): string | undefined {
  const text = raw?.trim().slice(0, 200);
  return text ? text : undefined;
}

export async function jobsPage(c: PageContext) {
  const account = c.get("account");
  const page = pageNumber(c.req.query("page"));
  const tab = tabFrom(c.req.query("status"));
  const search = searchFrom(c.req.query("q"));
  const [counts, list] = await Promise.all([
    jobTabCounts(c.get("db"), account.id, search),
    jobsWithThumbnails(c, account.id, PAGE_SIZE, (page - 1) * PAGE_SIZE, { tab, search }),
  ]);
  const first = (page - 1) * PAGE_SIZE + 1;
  const body = (
    <DashboardPage title="Jobs" section="/dashboard/jobs" email={account.email}>
      {counts.all === 0 && !search ? (
        <NoJobsYet origin={baseUrl(c)} />
      ) : (
        <>
          <JobSearch tab={tab} search={search} />
          <JobTabs current={tab} counts={counts} search={search} />
          <div data-live-list>
            {list.total === 0 ? (
              <p class="empty-state" role="status">
                {search ? (
                  <>
                    No jobs match <strong class="break">{search}</strong>
                    {tab === "all" ? "." : " under this tab."}{" "}
                    <a href={jobsListHref("all", undefined)}>All jobs</a>
                  </>
                ) : (
                  "No jobs here."
                )}
              </p>
            ) : (
              <>
                <p class="muted" role="status">
                  {list.rows.length === list.total
                    ? `${count(list.total)} ${list.total === 1 ? "job" : "jobs"}`
                    : `${count(first)}–${count(first + list.rows.length - 1)} of ${count(list.total)} jobs`}
                  , newest first. Frames can be downloaded until the job expires (your plan's
                  retention).
                </p>
                <JobTable jobs={list.rows} caption="Jobs" />
              </>
            )}
          </div>
          <Pager
            path="/dashboard/jobs"
            page={page}
            pageSize={PAGE_SIZE}
            total={list.total}
            query={{ ...(tab === "all" ? {} : { status: tab }), ...(search ? { q: search } : {}) }}
          />
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
    if (id.success) job = await readJob(accountReaderOf(c), id.data.id, false);
  } catch (err) {
    if (!(err instanceof ApiError && err.apiName === "JobNotFound")) throw err;
  }
  if (!job) return notFoundPage(c, "job", "/dashboard/jobs");
  const found = job;
  const [requestId, thumbs] = await Promise.all([
    found.status === "failed" ? jobRequestId(c.get("db"), account.id, found.id) : null,
    frameThumbnails(c, found),
  ]);
  return renderPage(
    c,
    <DashboardPage
      title={`Job: ${videoName(job.url)}`}
      section="/dashboard/jobs"
      email={account.email}
    >
      <JobDetails job={job} requestId={requestId} thumbs={thumbs} origin={baseUrl(c)} />
    </DashboardPage>,
  );
}

/** What a person calls the video: its file name, or its host for a page link. */
function videoName(url: string): string {
  try {
    const parsed = new URL(url);
    const last = parsed.pathname.split("/").filter(Boolean).at(-1);
    const name = decodeURIComponent(last ?? parsed.hostname);
    return name.length > 60 ? `${name.slice(0, 59)}…` : name;
  } catch {
    return "video";
  }
}

/** What the job's files are: kept until a moment, deleted at it, or none at all. */
function Retention(props: { job: Job }) {
  const { job } = props;
  const hasFiles =
    job.frames.some((frame) => frame.status === "ok") || job.zip_bytes !== null || !!job.storyboard;
  if (!job.expires_at || !hasFiles || job.status === "failed") return null;
  return (
    <div>
      <dt>{job.status === "expired" ? "Files deleted" : "Files until"}</dt>
      <dd>
        <When iso={job.expires_at} />
      </dd>
    </div>
  );
}

function JobDetails(props: {
  job: Job;
  requestId: string | null;
  thumbs: Map<number, string>;
  origin: string;
}) {
  const { job } = props;
  const failed = job.status === "failed";
  const running = !isFinalStatus(job.status);
  return (
    <div data-live-job={job.id} data-status={job.status}>
      <p>
        <a href="/dashboard/jobs">← All jobs</a>
      </p>
      <dl class="facts">
        <div class="fact-wide">
          <dt>Video</dt>
          <dd class="break">{job.url}</dd>
        </div>
        <div class="fact-wide">
          <dt>Asked for</dt>
          <dd class="break">{optionsLabel(job.options)}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={job.status} />
            {running && <JobProgress status={job.status} progress={job.progress ?? null} />}
          </dd>
        </div>
        {!(failed && job.frames_count === null) && (
          <div>
            <dt>Frames</dt>
            <dd>
              {job.frames_count === null ? "—" : count(job.frames_count - job.frames_failed)}
              {job.frames_failed > 0 && <span class="hint">{job.frames_failed} failed</span>}
            </dd>
          </div>
        )}
        {!failed && (
          <div>
            <dt>Credits</dt>
            <dd>{job.credits_charged === null ? "—" : count(job.credits_charged)}</dd>
          </div>
        )}
        <div>
          <dt>Created</dt>
          <dd>
            <When iso={job.created_at} />
          </dd>
        </div>
        <Retention job={job} />
        {job.video && <VideoFacts video={job.video} />}
        {job.captions ? (
          <div>
            <dt>Captions</dt>
            <dd>
              {job.captions.url ? (
                <a href={job.captions.url}>
                  WebVTT{job.captions.language ? ` (${job.captions.language})` : ""}
                </a>
              ) : (
                "expired"
              )}
              <span class="hint">{CAPTION_SOURCE_NAMES[job.captions.source]}</span>
            </dd>
          </div>
        ) : (
          job.options.captions === true &&
          job.status === "completed" && (
            <div>
              <dt>Captions</dt>
              <dd>none found</dd>
            </div>
          )
        )}
        <div class="fact-wide">
          <dt>Job id</dt>
          <dd>
            <code>{job.id}</code>
          </dd>
        </div>
      </dl>
      {/* A failed job's notice is its error's message: said once, in the failure's section. */}
      {job.error && <JobFailure error={job.error} requestId={props.requestId} />}
      {job.notice && !failed && <p class="muted">{job.notice}</p>}
      {job.zip_url && (
        <p>
          <a class="button button-secondary" href={job.zip_url}>
            Download the ZIP{job.zip_bytes ? ` (${(job.zip_bytes / 1_048_576).toFixed(1)} MB)` : ""}
          </a>
        </p>
      )}
      <JobExtras job={job} />
      {job.storyboard && <StoryboardSection storyboard={job.storyboard} />}
      {running ? (
        <p class="muted">This page follows the job: its frames appear here when it completes.</p>
      ) : (
        job.frames.length > 0 && <FrameGallery job={job} thumbs={props.thumbs} />
      )}
      {!running && !failed && job.frames.length === 0 && <p class="muted">No frames to show.</p>}
      <JobAsked job={job} origin={props.origin} />
    </div>
  );
}

type VideoFactsOf = NonNullable<Job["video"]>;

/** Seconds as a person reads a length: 1:05, 1:02:03. */
function clockTime(seconds: number): string {
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** What the probe (and, for a platform link, the platform) said about the video. */
function VideoFacts(props: { video: VideoFactsOf }) {
  const { video } = props;
  const picture =
    video.width && video.height
      ? `${video.width}×${video.height}${video.frame_rate ? ` at ${Number(video.frame_rate.toFixed(3))} fps` : ""}`
      : null;
  return (
    <>
      {video.title && (
        <div class="fact-wide">
          <dt>Title</dt>
          <dd class="break">
            {video.page_url && /^https?:\/\//i.test(video.page_url) ? (
              <a href={video.page_url}>{video.title}</a>
            ) : (
              video.title
            )}
            {(video.channel ?? video.uploader) && (
              <span class="hint">{video.channel ?? video.uploader}</span>
            )}
          </dd>
        </div>
      )}
      {video.duration_seconds !== null && (
        <div>
          <dt>Length</dt>
          <dd>{clockTime(video.duration_seconds)}</dd>
        </div>
      )}
      {picture && (
        <div>
          <dt>Picture</dt>
          <dd>
            {picture}
            <span class="hint">
              {[video.codec, video.has_audio ? "with sound" : "no sound"]
                .filter(Boolean)
                .join(", ")}
            </span>
          </dd>
        </div>
      )}
    </>
  );
}

const CAPTION_SOURCE_NAMES: Record<NonNullable<Job["captions"]>["source"], string> = {
  uploader: "by the uploader",
  automatic: "automatic",
  embedded: "from the file",
};

/** The contact sheet, and the files a video player takes for thumbnails on its timeline. */
function StoryboardSection(props: { storyboard: NonNullable<Job["storyboard"]> }) {
  const { storyboard } = props;
  return (
    <section aria-labelledby="storyboard-title">
      <h2 id="storyboard-title">Storyboard</h2>
      {storyboard.image_url ? (
        <a href={storyboard.image_url} class="storyboard">
          <img
            src={storyboard.image_url}
            alt={`Contact sheet: the frames in ${storyboard.rows} rows of ${storyboard.columns}`}
            width={storyboard.tile_width * storyboard.columns}
            height={storyboard.tile_height * storyboard.rows}
            loading="lazy"
            decoding="async"
          />
        </a>
      ) : (
        <p class="muted">The storyboard's files have expired.</p>
      )}
      {storyboard.vtt_url && storyboard.sprite_url && (
        <p class="muted">
          For a player's timeline thumbnails: the <a href={storyboard.vtt_url}>WebVTT track</a> and
          its <a href={storyboard.sprite_url}>sprite</a>.
        </p>
      )}
    </section>
  );
}
