import { createRouter } from "../../app.ts";
import { requireApiKey } from "../../middleware/auth.ts";
import { createJobHandler, getJobHandler, listJobsHandler } from "./handlers.ts";
import { createJobRoute, getJobRoute, listJobsRoute } from "./routes.ts";

const router = createRouter();
// "/v1/jobs/*" matches "/v1/jobs" too: one registration, or every request is counted twice.
router.use("/v1/jobs/*", requireApiKey);

export const jobsRouter = router
  .openapi(createJobRoute, createJobHandler)
  .openapi(listJobsRoute, listJobsHandler)
  .openapi(getJobRoute, getJobHandler);
