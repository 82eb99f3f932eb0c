// What identifies a source for reuse (decision 0350), from the answers the extractor already
// had: no validator or no size means no identity, since a URL alone says nothing of its bytes.
import { expect, it } from "vitest";
import { fileIdentity, platformIdentity } from "../../extractor/sources/source-identity.ts";

const url = new URL("https://cdn.test/videos/v.mp4");

it("identifies a file by its final URL with its ETag or Last-Modified and its size", () => {
  expect(fileIdentity(url, { etag: '"v1"' }, 1000)).toEqual({
    final_url: "https://cdn.test/videos/v.mp4",
    etag: '"v1"',
    last_modified: null,
    size: 1000,
  });
  const modified = "Wed, 01 Jul 2026 10:00:00 GMT";
  expect(fileIdentity(url, { "last-modified": modified }, 1000)).toEqual({
    final_url: "https://cdn.test/videos/v.mp4",
    etag: null,
    last_modified: modified,
    size: 1000,
  });
});

it("gives no identity without a validator, or without a size", () => {
  expect(fileIdentity(url, {}, 1000)).toBeNull();
  expect(fileIdentity(url, { etag: "" }, 1000)).toBeNull();
  expect(fileIdentity(url, { etag: '"v1"' }, null)).toBeNull();
  expect(fileIdentity(url, { etag: "x".repeat(1001) }, 1000)).toBeNull();
});

it("identifies a platform video by yt-dlp's extractor and id, never the generic extractor's", () => {
  expect(platformIdentity({ extractor_key: "Youtube", id: "dQw4w9WgXcQ" })).toBe(
    "youtube:dQw4w9WgXcQ",
  );
  expect(platformIdentity({ extractor: "vimeo", id: "76979871" })).toBe("vimeo:76979871");
  expect(platformIdentity({ extractor_key: "Generic", id: "v" })).toBeNull();
  expect(platformIdentity({ extractor_key: "Youtube" })).toBeNull();
  expect(platformIdentity({ extractor_key: "Youtube", id: 42 })).toBeNull();
});
