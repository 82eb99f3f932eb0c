// Entry point: `node extractor/main.ts`. Checks ffmpeg/ffprobe, then serves POST /extract.
//   INTERNAL_TOKEN           shared secret the edge sends (required)
//   EXTRACTOR_HOST / _PORT   where to listen (127.0.0.1:8788)
//   EXTRACTOR_CONCURRENCY    jobs at once (2); more get 503 + Retry-After
//   EXTRACTOR_JOB_TIMEOUT_SECONDS  wall-clock budget per job (900)
import { checkMediaTools } from "./ffmpeg/process.ts";
import { log } from "./log.ts";
import { createExtractorServer } from "./server.ts";

const token = process.env.INTERNAL_TOKEN;
if (!token) {
  console.error(
    "INTERNAL_TOKEN is not set: the extractor refuses to run without its shared secret.",
  );
  process.exit(1);
}

try {
  await checkMediaTools();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

const host = process.env.EXTRACTOR_HOST || "127.0.0.1";
const port = Number(process.env.EXTRACTOR_PORT) || 8788;
const concurrency = Math.max(1, Number(process.env.EXTRACTOR_CONCURRENCY) || 2);
const server = createExtractorServer({ token, concurrency });

server.listen(port, host, () => {
  log("info", "extractor listening", { url: `http://${host}:${port}`, concurrency });
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    log("info", "extractor stopping", { signal });
    server.close(() => process.exit(0));
    // Running jobs are abandoned after a grace period; the queue redelivers them.
    setTimeout(() => process.exit(0), 10_000).unref();
  });
}
