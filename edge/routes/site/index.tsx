// The public pages: the landing page with the live demo and the API reference at /docs
// (routes.ts says what is served where; the page modules render).
import { createRouter } from "../../app.ts";
import { serveAsset } from "../../pages/assets.ts";
import { pageHeaders } from "../../pages/layout.tsx";
import { docsPage } from "./docs.tsx";
import { guidePage } from "./guides.tsx";
import { landingPage } from "./landing.tsx";
import { llmsTxt, referencePage } from "./llms.ts";
import {
  DOCS_PAGE_PATH,
  GUIDE_PAGE_PATH,
  LANDING_PATH,
  LLMS_TXT_PATH,
  REFERENCE_MARKDOWN_PATH,
  SITE_ASSETS,
} from "./routes.ts";

export const siteRouter = createRouter();
for (const asset of SITE_ASSETS) siteRouter.get(asset.route, (c) => serveAsset(c, asset));
siteRouter.use(LANDING_PATH, pageHeaders);
siteRouter.use(DOCS_PAGE_PATH, pageHeaders);
siteRouter.get(LANDING_PATH, landingPage);
siteRouter.get(DOCS_PAGE_PATH, docsPage);
siteRouter.use(GUIDE_PAGE_PATH, pageHeaders);
siteRouter.get(GUIDE_PAGE_PATH, guidePage);
siteRouter.use(LLMS_TXT_PATH, pageHeaders);
siteRouter.get(LLMS_TXT_PATH, llmsTxt);
siteRouter.use(REFERENCE_MARKDOWN_PATH, pageHeaders);
siteRouter.get(REFERENCE_MARKDOWN_PATH, referencePage);
