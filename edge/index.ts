// The worker's entry: the HTTP app, the queue consumers, the cron handler and the Durable
// Object classes. OAuth access tokens for /mcp are exchanged for their connector's API key
// before the app sees a request (edge/oauth/tokens.ts), so the app knows one credential.
import { createApp } from "./app.ts";
import { batchJobEnded } from "./batches/ended.ts";
import { onJobEnded } from "./jobs/settlement.ts";
import { runScheduledMaintenance } from "./maintenance.ts";
import { MCP_PATH, mcpRouter } from "./mcp/index.ts";
import { recordApiRequests } from "./middleware/request-log.ts";
import { oauthRouter } from "./oauth/index.tsx";
import { withConnectorKey } from "./oauth/tokens.ts";
import { handleQueueBatch } from "./queues/index.ts";
import { accountRouter } from "./routes/account/index.tsx";
import { billingRouter } from "./routes/billing/index.ts";
import { devRouter } from "./routes/dev/index.ts";
import { filesRouter } from "./routes/files/index.ts";
import { internalRouter } from "./routes/internal/index.ts";
import { samplesRouter } from "./routes/samples/index.ts";
import { siteRouter } from "./routes/site/index.tsx";
import { v1Router } from "./routes/v1.ts";

export { ExtractorContainer } from "./durable/extractor-container.ts";
export { JobWaiter } from "./durable/job-waiter.ts";
export { RateLimiter } from "./durable/rate-limiter.ts";

// A job's end feeds its account's batches and may complete one (edge/batches/ended.ts).
onJobEnded(batchJobEnded);

export const app = createApp();
// Liveness, and the bare baseline route of the API benchmark: no auth, no limiter, no D1.
app.get("/healthz", (c) => c.json({ ok: true }));
// Requests made with an API key, in the account's request log (decision 0250).
app.use("/v1/*", recordApiRequests);
app.use(MCP_PATH, recordApiRequests);
app
  .route("/", v1Router)
  .route("/", filesRouter)
  .route("/", samplesRouter)
  .route("/", internalRouter)
  .route("/", siteRouter)
  .route("/", accountRouter)
  .route("/", billingRouter)
  .route("/", mcpRouter)
  .route("/", oauthRouter)
  .route("/", devRouter);

export default {
  fetch: async (request, env, ctx) => app.fetch(await withConnectorKey(request, env), env, ctx),
  queue: handleQueueBatch,
  scheduled: (controller, env, ctx) =>
    ctx.waitUntil(runScheduledMaintenance(env, controller.scheduledTime)),
} satisfies ExportedHandler<Env>;
