// `npm start` and `.ci/run` on a machine without ffmpeg: the decision (install as root through
// apt-get, else one line naming the command) checked with fake apt-get/id/ffmpeg commands
// that record their calls. Nothing is installed or removed on this machine.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ensureMediaTools,
  ensureTextTools,
  missingMediaTools,
} from "../../scripts/lib/media-tools.mjs";
import { ROOT } from "../../scripts/lib/stack.mjs";
import { fakeBin } from "../scripts/fake-bin.ts";

// Installing puts working ffmpeg and ffprobe on the PATH, as Debian's package does.
const INSTALLS_TOOLS = `
PATH=/usr/bin:/bin
case "$1" in
  install) printf '#!/bin/sh\\necho ffmpeg version 5.1\\n' > "$(dirname "$0")/ffmpeg"
           printf '#!/bin/sh\\necho ffprobe version 5.1\\n' > "$(dirname "$0")/ffprobe"
           chmod +x "$(dirname "$0")/ffmpeg" "$(dirname "$0")/ffprobe" ;;
esac
exit 0`;

function machine({ root, aptGet = INSTALLS_TOOLS }: { root: boolean; aptGet?: string | null }) {
  const bin = fakeBin();
  bin.add("id", `echo ${root ? 0 : 1000}`);
  if (aptGet !== null) bin.add("apt-get", aptGet);
  return { bin, env: { PATH: bin.dir } };
}

describe("media tools at start-up", () => {
  it("leaves a machine that has ffmpeg and ffprobe alone", () => {
    const { bin, env } = machine({ root: true });
    bin.add("ffmpeg", "exit 0");
    bin.add("ffprobe", "exit 0");
    const said: string[] = [];
    expect(ensureMediaTools({ env, say: (l) => said.push(l) })).toEqual({ installed: false });
    expect(said).toEqual([]);
    expect(bin.calls()).toEqual(["ffmpeg -version", "ffprobe -version"]);
  });

  it("as root installs Debian's ffmpeg, says so in one line, and checks it runs", () => {
    const { bin, env } = machine({ root: true });
    const said: string[] = [];
    expect(ensureMediaTools({ env, say: (l) => said.push(l) })).toEqual({ installed: true });
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("ffmpeg and ffprobe not found: installing");
    expect(said[0]).toContain("apt-get install -y --no-install-recommends ffmpeg");
    const apt = bin.calls().filter((c) => c.startsWith("apt-get") && !c.includes("--version"));
    expect(apt).toEqual([
      "apt-get update -qq DEBIAN_FRONTEND=noninteractive",
      "apt-get install -y --no-install-recommends ffmpeg -qq DEBIAN_FRONTEND=noninteractive",
    ]);
    expect(missingMediaTools(env)).toEqual([]);
  });

  it("not as root stops with one line naming the command, and runs no apt-get", () => {
    const { bin, env } = machine({ root: false });
    expect(() => ensureMediaTools({ env, say: () => {} })).toThrow(
      /^ffmpeg and ffprobe not found: install them with `sudo apt-get update && sudo apt-get install -y --no-install-recommends ffmpeg` \(or set FFMPEG_PATH and FFPROBE_PATH\)$/,
    );
    expect(bin.calls().filter((c) => c.startsWith("apt-get"))).toEqual([]);
  });

  it("as root without apt-get names the command instead of guessing another manager", () => {
    const { env } = machine({ root: true, aptGet: null });
    expect(() => ensureMediaTools({ env })).toThrow(
      "install them with `apt-get update && apt-get install",
    );
  });

  it("only checks when install is off (test stacks), even as root", () => {
    const { bin, env } = machine({ root: true });
    expect(() => ensureMediaTools({ env, install: false })).toThrow(/not found/);
    expect(bin.calls().filter((c) => c.startsWith("apt-get"))).toEqual([]);
  });

  it("reports a failed apt-get instead of starting without the tools", () => {
    const { env } = machine({ root: true, aptGet: '[ "$1" = install ] && exit 100; exit 0' });
    expect(() => ensureMediaTools({ env, say: () => {} })).toThrow(
      "apt-get install failed (exit 100): ffmpeg and ffprobe is still missing",
    );
  });

  it("names only the tool that is missing, and takes FFMPEG_PATH/FFPROBE_PATH", () => {
    const { bin, env } = machine({ root: false });
    const elsewhere = fakeBin();
    const ffprobe = elsewhere.add("my-ffprobe", "exit 0");
    bin.add("ffmpeg", "exit 0");
    expect(missingMediaTools(env)).toEqual(["ffprobe"]);
    expect(missingMediaTools({ ...env, FFPROBE_PATH: ffprobe })).toEqual([]);
    expect(missingMediaTools({ ...env, FFMPEG_PATH: join(bin.dir, "nope") })).toEqual([
      "ffmpeg",
      "ffprobe",
    ]);
  });

  it("as a command (what .ci/run calls): exit 1 and the one line, or exit 0 after installing", () => {
    const script = join(ROOT, "scripts/lib/media-tools.mjs");
    const user = machine({ root: false });
    const refused = spawnSync(process.execPath, [script], { env: user.env, encoding: "utf8" });
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toContain("sudo apt-get install -y --no-install-recommends ffmpeg");

    const root = machine({ root: true });
    const installed = spawnSync(process.execPath, [script], { env: root.env, encoding: "utf8" });
    expect(installed.status).toBe(0);
    expect(root.bin.calls()).toContain(
      "apt-get install -y --no-install-recommends ffmpeg -qq DEBIAN_FRONTEND=noninteractive",
    );
  });
});

// Installing puts a tesseract that lists English on the PATH, as Debian's packages do.
const INSTALLS_TESSERACT = `
PATH=/usr/bin:/bin
case "$1" in
  install) printf '#!/bin/sh\\necho List of available languages\\necho eng\\necho osd\\n' > "$(dirname "$0")/tesseract"
           chmod +x "$(dirname "$0")/tesseract" ;;
esac
exit 0`;

describe("tesseract at start-up (text: true)", () => {
  it("leaves a machine whose tesseract reads English alone", () => {
    const { bin, env } = machine({ root: true });
    bin.add("tesseract", "echo eng");
    const said: string[] = [];
    expect(ensureTextTools({ env, say: (l) => said.push(l) })).toEqual({
      installed: false,
      missing: false,
    });
    expect(said).toEqual([]);
    expect(bin.calls()).toEqual(["tesseract --list-langs"]);
  });

  it("as root installs Debian's tesseract and its English data, in one line", () => {
    const { bin, env } = machine({ root: true, aptGet: INSTALLS_TESSERACT });
    const said: string[] = [];
    expect(ensureTextTools({ env, say: (l) => said.push(l) })).toEqual({
      installed: true,
      missing: false,
    });
    expect(said).toEqual([
      "tesseract not found: installing Debian's (apt-get update && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng)",
    ]);
    const apt = bin.calls().filter((c) => c.startsWith("apt-get") && !c.includes("--version"));
    expect(apt).toEqual([
      "apt-get update -qq DEBIAN_FRONTEND=noninteractive",
      "apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng -qq DEBIAN_FRONTEND=noninteractive",
    ]);
  });

  it("not as root says so in one line, runs no apt-get and does not stop the start", () => {
    const { bin, env } = machine({ root: false });
    const said: string[] = [];
    expect(ensureTextTools({ env, say: (l) => said.push(l) })).toEqual({
      installed: false,
      missing: true,
    });
    expect(said).toEqual([
      "tesseract (with English) not found: jobs with text: true will fail; install it with `sudo apt-get update && sudo apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng` (or set TESSERACT_PATH)",
    ]);
    expect(bin.calls().filter((c) => c.startsWith("apt-get"))).toEqual([]);
  });

  it("counts a tesseract without English data as missing, and takes TESSERACT_PATH", () => {
    const { bin, env } = machine({ root: false });
    bin.add("tesseract", "echo osd");
    const elsewhere = fakeBin();
    const mine = elsewhere.add("my-tesseract", "echo eng");
    const said: string[] = [];
    expect(ensureTextTools({ env, say: (l) => said.push(l) }).missing).toBe(true);
    expect(ensureTextTools({ env: { ...env, TESSERACT_PATH: mine }, say: () => {} })).toEqual({
      installed: false,
      missing: false,
    });
  });
});
