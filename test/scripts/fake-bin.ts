// A PATH of fake commands for the set-up tests: each records its arguments (and the
// DEBIAN_FRONTEND it saw) in calls.log, so a test checks what set-up would have run on a real
// machine without installing or removing anything here.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface FakeBin {
  dir: string;
  /** Adds an executable shell script named `name` whose body is `body`, logging each call. */
  add(name: string, body: string): string;
  /** Every recorded call, as "<name> <args>" lines. */
  calls(): string[];
}

export function fakeBin(): FakeBin {
  const dir = mkdtempSync(join(tmpdir(), "stills-fake-bin-"));
  const log = join(dir, "calls.log");
  return {
    dir,
    add(name, body) {
      const file = join(dir, name);
      writeFileSync(
        file,
        `#!/bin/sh\necho "${name} $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> "${log}"\n${body}\n`,
      );
      chmodSync(file, 0o755);
      return file;
    },
    calls: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((line) => line.replace(/ DEBIAN_FRONTEND=$/, ""))
        : [],
  };
}

/**
 * A directory of links to every command in /usr/bin and /bin except `without`: the machine's
 * PATH as a fresh one without those tools would be, while the real tools stay installed.
 */
export function pathWithout(without: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "stills-path-"));
  mkdirSync(dir, { recursive: true });
  for (const source of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    if (!existsSync(source)) continue;
    for (const name of readdirSync(source)) {
      if (without.includes(name) || existsSync(join(dir, name))) continue;
      try {
        symlinkSync(join(source, name), join(dir, name));
      } catch {}
    }
  }
  return dir;
}
