// The public pages: the landing page with the live demo, and the API reference at /docs.
import { createRouter } from "../../app.ts";
import { SITE_CSS, serveAsset } from "../../pages/assets.ts";
import { OPENAPI_PATH } from "../docs/index.ts";

// Scalar's reference page, pinned; it loads the document from our own origin.
const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Stills API reference</title>
</head>
<body>
  <script id="api-reference" data-url="${OPENAPI_PATH}"></script>
  <script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference@1.72.1"></script>
</body>
</html>`;

export const siteRouter = createRouter();
siteRouter.get(SITE_CSS.route, (c) => serveAsset(c, SITE_CSS));
siteRouter.get("/docs", (c) => c.html(REFERENCE_PAGE));
