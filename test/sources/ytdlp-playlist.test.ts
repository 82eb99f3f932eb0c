// A playlist link expanded by yt-dlp (extractor/sources/ytdlp-playlist.ts, decision 0340
// "Playlists"): a fake yt-dlp records its arguments and prints a flat listing.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultPolicy } from "../../extractor/sources/policy.ts";
import { expandWithYtDlp, expansionOf } from "../../extractor/sources/ytdlp-playlist.ts";

function fakeYtDlp(json: unknown): { binary: string; args: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), "fake-ytdlp-"));
  const out = join(dir, "out.json");
  const argsFile = join(dir, "args");
  writeFileSync(out, JSON.stringify(json));
  const binary = join(dir, "yt-dlp");
  writeFileSync(binary, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\ncat '${out}'\n`);
  chmodSync(binary, 0o755);
  return { binary, args: () => readFileSync(argsFile, "utf8").trim().split("\n") };
}

const entries = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    _type: "url",
    url: `https://www.youtube.com/watch?v=video${String(i).padStart(6, "0")}#__youtubedl_smuggle=x`,
  }));

describe("expandWithYtDlp", () => {
  it("asks for one entry more than it takes, and says the list is longer", async () => {
    const fake = fakeYtDlp({ _type: "playlist", title: "L", entries: entries(4) });
    const got = await expandWithYtDlp("https://www.youtube.com/playlist?list=PLx", {
      policy: defaultPolicy(false),
      maxEntries: 3,
      deadlineMs: 10_000,
      binary: fake.binary,
    });
    expect(got).toEqual({
      kind: "playlist",
      title: "L",
      entries: entries(3).map((e) => e.url.replace(/#.*$/, "")),
      more: true,
    });
    const args = fake.args();
    expect(args).toContain("--flat-playlist");
    expect(args[args.indexOf("--playlist-end") + 1]).toBe("4");
    expect(args).not.toContain("--no-playlist");
    expect(args.at(-1)).toBe("https://www.youtube.com/playlist?list=PLx");
  });

  it("a list exactly as long as the limit is not 'more'; a single video is one", () => {
    expect(expansionOf({ _type: "playlist", entries: entries(3) }, "u", 3)).toMatchObject({
      more: false,
    });
    expect(expansionOf({ _type: "video", title: "T" }, "https://x/v", 3)).toEqual({
      kind: "video",
      url: "https://x/v",
      title: "T",
    });
  });

  it("output past the byte bound fails the listing", async () => {
    const fake = fakeYtDlp({ _type: "playlist", entries: entries(50) });
    await expect(
      expandWithYtDlp("https://www.youtube.com/playlist?list=PLx", {
        policy: defaultPolicy(false),
        maxEntries: 100,
        deadlineMs: 10_000,
        binary: fake.binary,
        maxBytes: 100,
      }),
    ).rejects.toMatchObject({ name: "DownloadFailed" });
  });
});
