// A job's files from its page: "Download all" (every frame as one ZIP, streamed from R2) and the
// small JSON the page's script polls while jobs run (status and progress, decision 0241).
import { JobIdParamSchema } from "../../../schema/api.ts";
import { isFinalStatus } from "../../../schema/job-status.ts";
import { ApiError } from "../../errors.ts";
import { readJob } from "../../jobs/read.ts";
import { frameRowsOf } from "../../jobs/store/frames.ts";
import { accountJobRow } from "../../jobs/store/jobs.ts";
import { accountReaderOf } from "../../request.ts";
import { filesAreLive } from "../../serialize.ts";
import { planZip, type ZipEntry, zipStream } from "./frames-zip.ts";
import { progressLabel } from "./job-list.tsx";
import type { PageContext } from "./ui.tsx";
import { DashboardPage, renderPage } from "./ui.tsx";

/** The ZIP's file name: the job's id, so two downloads never collide. */
export function zipFileName(jobId: string): string {
  return `stills-${jobId}-frames.zip`;
}

function downloadRefused(c: PageContext, title: string, text: string, status: 404 | 400) {
  const jobId = c.req.param("id") ?? "";
  return renderPage(
    c,
    <DashboardPage title={title} section="/dashboard/jobs" email={c.get("account").email}>
      <p>{text}</p>
      <p>
        <a href={`/dashboard/jobs/${encodeURIComponent(jobId)}`}>Back to the job</a>
      </p>
    </DashboardPage>,
    status,
  );
}

/**
 * GET /dashboard/jobs/:id/frames.zip: the job's frames in index order, each under its own
 * file name, byte for byte as stored. A job that asked for the ZIP alone has no single files:
 * its own ZIP is streamed instead.
 */
export async function downloadAllFrames(c: PageContext) {
  const id = JobIdParamSchema.safeParse({ id: c.req.param("id") });
  const row = id.success
    ? await accountJobRow(c.get("db"), id.data.id, c.get("account").id)
    : undefined;
  if (!row) {
    return downloadRefused(c, "Job not found", "This account has no job with that id.", 404);
  }
  if (!filesAreLive(row)) {
    return downloadRefused(
      c,
      "Nothing to download",
      row.status === "completed"
        ? "This job's files have expired and were deleted."
        : "Only a completed job has frames to download.",
      400,
    );
  }
  const frameRows = await frameRowsOf(c.get("db"), row.id);
  const entries: ZipEntry[] = frameRows
    .filter((frame) => frame.status === "ok" && frame.key)
    .map((frame) => ({ name: frame.key?.split("/").at(-1) ?? "", key: frame.key as string }));
  if (entries.length === 0 && row.zipKey) {
    const object = await c.env.FILES.get(row.zipKey);
    if (object) return zipResponse(object.body, row.id, object.size);
  }
  if (entries.length === 0) {
    return downloadRefused(c, "Nothing to download", "This job has no frames to download.", 400);
  }
  const plan = await planZip(c.env.FILES, entries);
  if (!plan.ok) {
    return downloadRefused(
      c,
      "Cannot make the ZIP",
      plan.reason === "too-large"
        ? "The frames together pass 4 GB, more than one ZIP can hold. Download them one by one, or ask for JPG or a lower resolution."
        : "Some of this job's files are gone. Create the job again for new frames.",
      400,
    );
  }
  const modified = new Date(row.completedAt ?? row.createdAt);
  return zipResponse(zipStream(c.env.FILES, entries, modified), row.id);
}

function zipResponse(body: ReadableStream, jobId: string, length?: number) {
  const headers = new Headers({
    "content-type": "application/zip",
    "content-disposition": `attachment; filename="${zipFileName(jobId)}"`,
    "cache-control": "no-store",
  });
  if (length !== undefined) headers.set("content-length", String(length));
  return new Response(body, { headers });
}

/** Jobs one poll may ask about: a page of the list. */
const MAX_LIVE_JOBS = 50;

/**
 * GET /dashboard/jobs/live?ids=a,b: each job's status and progress as the API reads them
 * (readJob, the serializer of GET /v1/jobs/{id}), and whether any still runs; the page's
 * script polls it while one does and stops when none does. Another account's job, or an id
 * that is not one, is left out.
 */
export async function liveJobs(c: PageContext) {
  const ids = [...new Set((c.req.query("ids") ?? "").split(","))]
    .filter((raw) => JobIdParamSchema.safeParse({ id: raw }).success)
    .slice(0, MAX_LIVE_JOBS);
  const read = await Promise.all(
    ids.map(async (id) => {
      try {
        return await readJob(accountReaderOf(c), id, false);
      } catch (error) {
        if (error instanceof ApiError && error.apiName === "JobNotFound") return null;
        throw error;
      }
    }),
  );
  const jobs = read
    .filter((job) => job !== null)
    .map((job) => ({
      id: job.id,
      status: job.status,
      progress: job.progress ?? null,
      label: progressLabel(job.status, job.progress ?? null),
    }));
  c.header("Cache-Control", "no-store");
  return c.json({ jobs, running: jobs.some((job) => !isFinalStatus(job.status)) });
}
