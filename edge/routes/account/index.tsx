// Sign-in by e-mail code and the developer dashboard (issue 8): pages rendered by the edge.
// Every page sends the strict Content-Security-Policy; every form post must come from our own
// origin (CSRF); every dashboard page needs a session.
import { createRouter } from "../../app.ts";
import { requireSession, sameOriginForms } from "../../auth/guards.ts";
import { serveAsset } from "../../pages/assets.ts";
import { pageHeaders } from "../../pages/layout.tsx";
import { billingPagesRouter } from "./billing.tsx";
import { jobsRouter } from "./jobs.tsx";
import { keysRouter } from "./keys.tsx";
import { overviewRouter } from "./overview.tsx";
import { signInRouter } from "./sign-in.tsx";
import { DASHBOARD_CSS, DASHBOARD_JS } from "./ui.tsx";
import { webhooksRouter } from "./webhooks.tsx";

export const accountRouter = createRouter();

const FORM_METHODS = ["POST", "PUT", "PATCH", "DELETE"];

for (const path of ["/sign-in", "/sign-in/*", "/sign-out", "/dashboard", "/dashboard/*"]) {
  accountRouter.use(path, pageHeaders);
  // Before the session check: a forged post learns nothing, not even where sign-in is.
  accountRouter.on(FORM_METHODS, path, sameOriginForms);
}
accountRouter.use("/dashboard", requireSession);
accountRouter.use("/dashboard/*", requireSession);

accountRouter.get(DASHBOARD_CSS.route, (c) => serveAsset(c, DASHBOARD_CSS));
accountRouter.get(DASHBOARD_JS.route, (c) => serveAsset(c, DASHBOARD_JS));

accountRouter
  .route("/", signInRouter)
  .route("/", overviewRouter)
  .route("/", jobsRouter)
  .route("/", keysRouter)
  .route("/", billingPagesRouter)
  .route("/", webhooksRouter);
