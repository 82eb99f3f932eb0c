// The public pages: the landing page with the live demo, the API reference at /docs, and the
// files they load, all from our own origin.
import { createRouter } from "../../app.ts";
import { SITE_CSS, SITE_ICON, type StaticAsset, serveAsset } from "../../pages/assets.ts";
import { COPY_JS } from "../../pages/copyable-code.tsx";
import { pageHeaders } from "../../pages/layout.tsx";
import { DOCS_CSS, DOCS_JS, docsPage, SCALAR_JS } from "./docs.tsx";
import { LANDING_CSS, LANDING_JS, landingPage } from "./landing.tsx";

const ASSETS: StaticAsset[] = [
  SITE_CSS,
  SITE_ICON,
  COPY_JS,
  LANDING_CSS,
  LANDING_JS,
  DOCS_CSS,
  DOCS_JS,
  SCALAR_JS,
];

export const siteRouter = createRouter();
for (const asset of ASSETS) siteRouter.get(asset.route, (c) => serveAsset(c, asset));
siteRouter.use("/", pageHeaders);
siteRouter.use("/docs", pageHeaders);
siteRouter.get("/", landingPage);
siteRouter.get("/docs", docsPage);
