// A job's frames as a gallery: each frame's thumbnail (at most 320 px wide, made by the
// extractor; never the original, decision 0240), its number, time and caption; a click opens it
// in the lightbox (the dashboard's script: ←/→ move, Esc closes), and without the script the
// link opens the frame itself. "Download all" gives every frame as one ZIP (job-files.tsx).
import type { readJob } from "../../jobs/read.ts";
import { zipFileName } from "./job-files.tsx";
import { When } from "./ui.tsx";

type Job = Awaited<ReturnType<typeof readJob>>;
type Frame = Job["frames"][number];

/** "Frame 3 · 4.5 s · pts 4.466": what the lightbox says of a frame (its caption apart). */
function frameTitle(frame: Frame): string {
  return `Frame ${frame.index} · ${frame.timestamp} s${frame.pts != null ? ` · pts ${frame.pts}` : ""}`;
}

function FrameTile(props: { frame: Frame; thumb: string | undefined; job: Job }) {
  const { frame, thumb, job } = props;
  const picture = thumb ? (
    <img
      src={thumb}
      alt={`Frame ${frame.index} at ${frame.timestamp} s`}
      width={job.width ?? 160}
      height={job.height ?? 90}
      loading="lazy"
      decoding="async"
    />
  ) : null;
  // The lightbox shows the frame itself when it has a file, else (ZIP only) its thumbnail.
  const full = frame.url ?? thumb;
  return (
    <li class="frame">
      {full ? (
        <a
          href={full}
          class="frame-open"
          data-lightbox
          data-full={full}
          data-title={frameTitle(frame)}
          data-caption={frame.caption ?? ""}
          data-only-thumb={frame.url ? undefined : "true"}
        >
          {picture ?? (
            // A frame made before thumbnails: a link to it, never its full picture in the grid.
            <span class="frame-missing frame-no-preview">
              Frame {frame.index}
              <span class="hint">no preview · open</span>
            </span>
          )}
        </a>
      ) : (
        <span class="frame-missing">
          {frame.status === "ok" ? (job.zip_url ? "in the ZIP" : "expired") : "no frame"}
        </span>
      )}
      <span class="frame-caption">
        #{frame.index} · {frame.timestamp} s{frame.error && <span class="hint">{frame.error}</span>}
        {frame.caption && <q class="frame-subtitle">{frame.caption}</q>}
      </span>
    </li>
  );
}

export function FrameGallery(props: { job: Job; thumbs: Map<number, string> }) {
  const { job, thumbs } = props;
  const ok = job.frames.filter((frame) => frame.status === "ok");
  const downloadable = job.status === "completed" && ok.length > 0;
  return (
    <section aria-labelledby="frames-title">
      <div class="section-head">
        <h2 id="frames-title">Frames</h2>
        {downloadable && (
          <a
            class="button button-secondary button-small"
            href={`/dashboard/jobs/${job.id}/frames.zip`}
            download={zipFileName(job.id)}
          >
            Download all<span class="sr-only"> frames as a ZIP</span>
          </a>
        )}
      </div>
      <ul class="frame-grid" data-gallery>
        {job.frames.map((frame) => (
          <FrameTile frame={frame} thumb={thumbs.get(frame.index)} job={job} />
        ))}
      </ul>
      {ok.length > 0 && (
        <p class="muted">
          Each frame opens full size (← and → move between them, Esc closes); links are signed and
          work until <When iso={job.expires_at} />.
        </p>
      )}
      {ok.length > 0 && (
        <Lightbox first={job.frames.find((f) => f.url)?.url ?? "/dashboard/jobs"} />
      )}
    </section>
  );
}

/** The viewer the script opens; a native modal dialog keeps focus inside and closes on Esc. */
function Lightbox(props: { first: string }) {
  return (
    <dialog class="lightbox" id="lightbox" aria-labelledby="lightbox-title">
      <div class="lightbox-bar">
        <p id="lightbox-title" class="lightbox-title" />
        <div class="lightbox-actions">
          <button type="button" class="button-secondary button-small" data-lightbox-prev>
            ←<span class="sr-only"> Previous frame</span>
          </button>
          <button type="button" class="button-secondary button-small" data-lightbox-next>
            →<span class="sr-only"> Next frame</span>
          </button>
          <a class="button button-secondary button-small" data-lightbox-original href={props.first}>
            Open original
          </a>
          <button type="button" class="button-small" data-lightbox-close>
            Close<span class="sr-only"> the viewer</span>
          </button>
        </div>
      </div>
      {/* The script puts the frame's <img> here when it opens, and takes it out on closing. */}
      <div class="lightbox-picture" />
      <p class="lightbox-caption" />
    </dialog>
  );
}
