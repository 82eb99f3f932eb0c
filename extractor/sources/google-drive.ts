// Google Drive answers big files with a "can't scan this file for viruses" page instead of the
// file. The page holds a form (or, in its older form, a link) whose URL carries the confirmation
// token; following it gives the file. Other Drive pages mean login, missing access or a quota.
import { downloadFailed, noVideoFound, privateContent } from "./errors.ts";

export type DrivePageVerdict = { kind: "confirm"; url: URL } | { kind: "error"; error: Error };

const ENTITIES: Record<string, string> = {
  amp: "&",
  quot: '"',
  "#39": "'",
  lt: "<",
  gt: ">",
  "#x27": "'",
};

function decodeEntities(text: string): string {
  return text.replace(/&(amp|quot|#39|#x27|lt|gt);/g, (_, name: string) => ENTITIES[name]);
}

function attributes(tag: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const match of tag.matchAll(/([a-zA-Z_:-]+)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/g)) {
    found[match[1].toLowerCase()] = decodeEntities(match[3] ?? match[4] ?? match[5] ?? "");
  }
  return found;
}

/** Google's own hosts, or the page's own host (which is how tests serve a Drive look-alike). */
function trustedTarget(target: URL, page: URL): boolean {
  return target.host === page.host || /(^|\.)google\.com$/.test(target.hostname);
}

export function readDrivePage(html: string, pageUrl: URL): DrivePageVerdict {
  const form = /<form\b[^>]*id=["']download-form["'][^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (form) {
    const formTag = /<form\b[^>]*>/i.exec(form[0])?.[0] ?? "";
    const target = new URL(attributes(formTag).action ?? "", pageUrl);
    for (const input of form[1].matchAll(/<input\b[^>]*>/gi)) {
      const { type, name, value } = attributes(input[0]);
      if (type?.toLowerCase() === "hidden" && name) target.searchParams.set(name, value ?? "");
    }
    if (trustedTarget(target, pageUrl)) return { kind: "confirm", url: target };
  }
  const link = /href=["']([^"']*\/uc\?[^"']*confirm=[^"']*)["']/i.exec(html);
  if (link) {
    const target = new URL(decodeEntities(link[1]), pageUrl);
    if (trustedTarget(target, pageUrl)) return { kind: "confirm", url: target };
  }
  if (/quota exceeded|too many users have viewed or downloaded/i.test(html)) {
    return {
      kind: "error",
      error: downloadFailed(
        "Google Drive's download quota for this file is exhausted",
        "Google Drive is limiting downloads of this file right now. Please try again later.",
      ),
    };
  }
  if (/accounts\.google\.com|you need access|request access|sign in/i.test(html)) {
    return { kind: "error", error: privateContent("the Drive file is not shared publicly") };
  }
  return { kind: "error", error: noVideoFound("Google Drive answered with a page, not a file") };
}
