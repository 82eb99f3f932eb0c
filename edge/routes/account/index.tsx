// Sign-in by e-mail code and the developer dashboard (issue 8): pages rendered by the edge.
// routes.ts says where each page is and what guards it; the page modules hold the handlers.
import { createRouter } from "../../app.ts";
import { requireSession, sameOriginForms } from "../../auth/guards.ts";
import { serveAsset } from "../../pages/assets.ts";
import { pageHeaders } from "../../pages/layout.tsx";
import { activityPage } from "./activity.tsx";
import { batchesPage, batchPage } from "./batches.tsx";
import { showBillingPage, submitCheckout, submitPortal } from "./billing.tsx";
import { downloadAllFrames, liveJobs } from "./job-files.tsx";
import { jobPage, jobsPage } from "./jobs.tsx";
import { keysPage, submitKeyRevocation, submitNewKey } from "./keys.tsx";
import { downloadLedger } from "./ledger-export.ts";
import { overviewPage } from "./overview.tsx";
import { requestsPage } from "./requests.tsx";
import { ACCOUNT_PAGES as P, PAGE_PATHS, SESSION_PATHS } from "./routes.ts";
import { codePage, sendSignInCode, signInPage, signInWithCode, signOut } from "./sign-in.tsx";
import { DASHBOARD_CSS, DASHBOARD_JS } from "./ui.tsx";
import { usagePage } from "./usage.tsx";
import { deliveryPage, submitResend } from "./webhook-deliveries.tsx";
import {
  revealSigningSecret,
  rotateSigningSecret,
  submitWebhookTest,
  webhooksPage,
} from "./webhooks.tsx";

export const accountRouter = createRouter();

for (const path of PAGE_PATHS) {
  accountRouter.use(path, pageHeaders);
  // Before the session check: a forged post learns nothing, not even where sign-in is.
  accountRouter.use(path, sameOriginForms);
}
for (const path of SESSION_PATHS) accountRouter.use(path, requireSession);

accountRouter.get(DASHBOARD_CSS.route, (c) => serveAsset(c, DASHBOARD_CSS));
accountRouter.get(DASHBOARD_JS.route, (c) => serveAsset(c, DASHBOARD_JS));

accountRouter
  .get(P.signIn, signInPage)
  .post(P.signIn, sendSignInCode)
  .get(P.signInCode, codePage)
  .post(P.signInCode, signInWithCode)
  .post(P.signOut, signOut)
  .get(P.overview, overviewPage)
  .get(P.jobs, jobsPage)
  .get(P.liveJobs, liveJobs)
  .get(P.job, jobPage)
  .get(P.jobFramesZip, downloadAllFrames)
  .get(P.batches, batchesPage)
  .get(P.batch, batchPage)
  .get(P.keys, keysPage)
  .post(P.keys, submitNewKey)
  .post(P.revokeKey, submitKeyRevocation)
  .get(P.billing, showBillingPage)
  .post(P.checkout, submitCheckout)
  .post(P.billingPortal, submitPortal)
  .get(P.webhooks, webhooksPage)
  .post(P.revealWebhookSecret, revealSigningSecret)
  .post(P.rotateWebhookSecret, rotateSigningSecret)
  .post(P.testWebhook, submitWebhookTest)
  .get(P.webhookDelivery, deliveryPage)
  .post(P.resendWebhookDelivery, submitResend)
  .get(P.activity, activityPage)
  .get(P.usage, usagePage)
  .get(P.ledgerCsv, downloadLedger)
  .get(P.requests, requestsPage);
