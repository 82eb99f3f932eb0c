// What the public site serves where: its two pages and the static files they load, all from
// our own origin. The page handlers are the page modules' (landing.tsx, docs.tsx).
import { SITE_CSS, SITE_ICON, type StaticAsset } from "../../pages/assets.ts";
import { COPY_JS } from "../../pages/copyable-code.tsx";
import { DOCS_CSS, DOCS_JS, SCALAR_JS } from "./docs.tsx";
import { GUIDES_CSS } from "./guides.tsx";
import { LANDING_CSS, LANDING_JS } from "./landing.tsx";

export const LANDING_PATH = "/";
export const DOCS_PAGE_PATH = "/docs";
/** A guide (docs/guides/<guide>.md), or `<guide>.md` for its Markdown. */
export const GUIDE_PAGE_PATH = "/docs/:guide";
/** The docs for models: the llms.txt index and the API reference as Markdown (decision 0312). */
export const LLMS_TXT_PATH = "/llms.txt";
export const REFERENCE_MARKDOWN_PATH = "/docs.md";

export const SITE_ASSETS: StaticAsset[] = [
  SITE_CSS,
  SITE_ICON,
  COPY_JS,
  LANDING_CSS,
  LANDING_JS,
  DOCS_CSS,
  DOCS_JS,
  SCALAR_JS,
  GUIDES_CSS,
];
