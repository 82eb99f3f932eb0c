// A small text document a source is described by (an HLS playlist, a DASH manifest), fetched
// through safeFetch (the address policy, at most 3 redirects) and refused past maxBytes.
import { downloadFailed, errorForStatus } from "./errors.ts";
import type { FetchOptions } from "./safe-fetch.ts";
import { isOverLimit, readBody, safeFetch } from "./safe-fetch.ts";

export async function fetchTextDocument(
  url: URL,
  fetchOptions: FetchOptions,
  document: { name: string; maxBytes: number; headers?: Record<string, string> },
): Promise<{ text: string; url: URL }> {
  const response = await safeFetch(url, {
    ...fetchOptions,
    maxRedirects: 3,
    ...(document.headers ? { headers: { ...fetchOptions.headers, ...document.headers } } : {}),
  });
  if (response.status !== 200) {
    response.body.destroy();
    throw errorForStatus(response.status, `${response.url.origin}${response.url.pathname}`);
  }
  const body = await readBody(response.body, document.maxBytes).catch((error: unknown) => {
    if (!isOverLimit(error)) throw error;
    throw downloadFailed(
      `the ${document.name} at ${response.url.pathname} is over ${document.maxBytes} bytes`,
    );
  });
  return { text: body.toString("utf8"), url: response.url };
}
