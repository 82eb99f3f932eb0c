// The worker's entry: the HTTP app, the queue consumers, the cron handler and the Durable
// Object classes.
import { createApp } from "./app.ts";
import { runScheduledMaintenance } from "./maintenance.ts";
import { mcpRouter } from "./mcp/index.ts";
import { handleQueueBatch } from "./queues/index.ts";
import { accountRouter } from "./routes/account/index.tsx";
import { billingRouter } from "./routes/billing/index.ts";
import { mountDocs } from "./routes/docs/index.ts";
import { filesRouter } from "./routes/files/index.ts";
import { internalRouter } from "./routes/internal/index.ts";
import { siteRouter } from "./routes/site/index.tsx";
import { v1Router } from "./routes/v1.ts";

export { ExtractorContainer } from "./durable/extractor-container.ts";
export { RateLimiter } from "./durable/rate-limiter.ts";

export const app = createApp();
// Liveness, and the bare baseline route of the API benchmark: no auth, no limiter, no D1.
app.get("/healthz", (c) => c.json({ ok: true }));
app
  .route("/", v1Router)
  .route("/", filesRouter)
  .route("/", internalRouter)
  .route("/", siteRouter)
  .route("/", accountRouter)
  .route("/", billingRouter)
  .route("/", mcpRouter);
mountDocs(app);

export default {
  fetch: app.fetch,
  queue: handleQueueBatch,
  scheduled: (controller, env, ctx) =>
    ctx.waitUntil(runScheduledMaintenance(env, controller.scheduledTime)),
} satisfies ExportedHandler<Env>;
