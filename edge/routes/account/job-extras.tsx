// What a job's page shows beyond its frames for the modes and options of issue 39: the best
// frames' scores and the animated preview. Owned by that work; jobs.tsx only places it.
import type { readJob } from "../../jobs/read.ts";

type Job = Awaited<ReturnType<typeof readJob>>;

export function JobExtras(_props: { job: Job }) {
  return null;
}
