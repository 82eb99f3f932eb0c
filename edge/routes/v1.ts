// The public API, spec §4: every resource router of /v1.
import { createRouter } from "../app.ts";
import { demoRouter } from "./demo/index.ts";
import { jobsRouter } from "./jobs/index.ts";
import { pricingRouter } from "./pricing/index.ts";
import { usageRouter } from "./usage/index.ts";

export const v1Router = createRouter()
  .route("/", jobsRouter)
  .route("/", usageRouter)
  .route("/", pricingRouter)
  .route("/", demoRouter);
