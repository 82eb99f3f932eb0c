// Progress while a tool waits on a job. A client that sent a progressToken hears from us every
// few seconds, so it can show that the call is alive and, if it resets its timeout on
// progress (the SDK's resetTimeoutOnProgress), need not give up before the job is done. The
// message says what the job is doing when the caller can tell (job.progress: stage and frames).
import type { ToolExtra } from "./tool.ts";

const PROGRESS_EVERY_MS = 5_000;

export async function reportingProgress<T>(
  extra: ToolExtra,
  message: string,
  expectedSeconds: number,
  work: () => Promise<T>,
  now?: () => Promise<string | null>,
): Promise<T> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return work();
  const started = Date.now();
  const timer = setInterval(async () => {
    const seconds = Math.round((Date.now() - started) / 1000);
    const doing = await now?.().catch(() => null);
    extra
      .sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: seconds,
          total: expectedSeconds,
          message: doing ? `${message}: ${doing}` : message,
        },
      })
      // A client that went away cannot be told; the job goes on regardless.
      .catch(() => {});
  }, PROGRESS_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
