// What the extractor calls: frame and ZIP uploads, lease renewals, progress, its source and its result. The paths are
// in ./routes.ts; the handlers and the attempt-token check in ./handlers.ts.
import { createRouter } from "../../app.ts";
import {
  completeZipUpload,
  postResult,
  putFrameFile,
  putFrameFiles,
  putZipPart,
  renewAttemptLease,
  reportProgress,
  reportSource,
  requireAttemptKey,
  requireAttemptPrefix,
  startZipUpload,
} from "./handlers.ts";
import { INTERNAL_PATHS } from "./routes.ts";

export const internalRouter = createRouter()
  .put(INTERNAL_PATHS.FRAME_FILE, requireAttemptKey, putFrameFile)
  .post(INTERNAL_PATHS.FRAME_FILES, requireAttemptPrefix, putFrameFiles)
  .post(INTERNAL_PATHS.ZIP_COMPLETE, requireAttemptKey, completeZipUpload)
  .post(INTERNAL_PATHS.ZIP, requireAttemptKey, startZipUpload)
  .put(INTERNAL_PATHS.ZIP, requireAttemptKey, putZipPart)
  .post(INTERNAL_PATHS.LEASE, renewAttemptLease)
  .post(INTERNAL_PATHS.PROGRESS, reportProgress)
  .post(INTERNAL_PATHS.SOURCE, reportSource)
  .post(INTERNAL_PATHS.RESULTS, postResult);
