// The account's jobs: the whole list, page by page, and one job with its frames.
import { JobIdParamSchema } from "../../../schema/api.ts";
import { ApiError } from "../../errors.ts";
import { baseUrl, readJob } from "../../jobs/read.ts";
import { jobRequestId, jobsWithThumbnails } from "./data.ts";
import { JobFailure } from "./job-failure.tsx";
import { JobTable, NoJobsYet, StatusBadge } from "./job-list.tsx";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, Pager, pageNumber, renderPage, When } from "./ui.tsx";

const PAGE_SIZE = 20;

type Job = Awaited<ReturnType<typeof readJob>>;

export async function jobsPage(c: PageContext) {
  const account = c.get("account");
  const page = pageNumber(c.req.query("page"));
  const list = await jobsWithThumbnails(c, account.id, PAGE_SIZE, (page - 1) * PAGE_SIZE);
  const body = (
    <DashboardPage title="Jobs" section="/dashboard/jobs" email={account.email}>
      {list.total === 0 ? (
        <NoJobsYet origin={baseUrl(c)} />
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
  const requestId =
    job.status === "failed" ? await jobRequestId(c.get("db"), account.id, job.id) : null;
  return renderPage(
    c,
    <DashboardPage
      title={`Job: ${videoName(job.url)}`}
      section="/dashboard/jobs"
      email={account.email}
    >
      <JobDetails job={job} requestId={requestId} />
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

function JobDetails(props: { job: Job; requestId: string | null }) {
  const { job } = props;
  const ok = job.frames.filter((frame) => frame.status === "ok");
  const failed = job.status === "failed";
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
      {job.storyboard && <StoryboardSection storyboard={job.storyboard} />}
      {!(failed && job.frames.length === 0) && <h2>Frames</h2>}
      {failed && job.frames.length === 0 ? null : job.frames.length === 0 ? (
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
                {frame.caption && <q class="frame-subtitle">{frame.caption}</q>}
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
