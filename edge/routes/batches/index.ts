import { createRouter } from "../../app.ts";
import { createBatchHandler, getBatchHandler, listBatchesHandler } from "./handlers.ts";
import { createBatchRoute, getBatchRoute, listBatchesRoute } from "./routes.ts";

// Authentication is declared on each route (routes.ts), as for jobs.
export const batchesRouter = createRouter()
  .openapi(createBatchRoute, createBatchHandler)
  .openapi(listBatchesRoute, listBatchesHandler)
  .openapi(getBatchRoute, getBatchHandler);
