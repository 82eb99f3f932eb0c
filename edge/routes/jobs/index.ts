import { createRouter } from "../../app.ts";
import { createJobHandler, getJobHandler, listJobsHandler } from "./handlers.ts";
import { createJobRoute, getJobRoute, listJobsRoute } from "./routes.ts";

// Authentication is declared on each route (routes.ts), so a method no route answers reaches
// the API's 405 instead of an authentication error.
export const jobsRouter = createRouter()
  .openapi(createJobRoute, createJobHandler)
  .openapi(listJobsRoute, listJobsHandler)
  .openapi(getJobRoute, getJobHandler);
