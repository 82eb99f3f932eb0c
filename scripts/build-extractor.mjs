// The extractor as production runs it: `extractor/main.ts` (the service) and `extractor/cli.ts`
// (one job, for the bench) bundled by esbuild into dist/extractor/*.mjs, our own modules and
// schema/ in one file each, packages from node_modules as they are (sharp is native). Not
// minified: a stack trace names our functions, and each module's code follows a comment with
// its path.
//   npm run build:extractor   (or node scripts/build-extractor.mjs: the image's build stage)
// The local stack and the bench build it before they start the extractor (~50 ms).
//
// A build whose inputs (every source file esbuild read, as its metafile lists them) and outputs
// are byte for byte those of the last build is skipped: each test stack starts by building, and
// esbuild's run cost ~0.35 CPU-s a start for the same two files (decision 0294).
//
// Why: Node's type stripping is a TypeScript parser loaded into every extractor process.
// Measured on the bench's 2160p PNG job, the extractor's Node held ~15 MB less at the peak
// when it ran the bundle (the sources stay the truth: tests and the CLI still run them).
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { build, version as esbuildVersion } from "esbuild";

const ROOT = join(import.meta.dirname, "..");
export const EXTRACTOR_BUNDLE_DIR = join(ROOT, "dist", "extractor");
/** The service, as the image starts it. */
export const EXTRACTOR_MAIN = join(EXTRACTOR_BUNDLE_DIR, "main.mjs");
/** One job from the command line (extractor/cli.ts), as the bench runs it. */
export const EXTRACTOR_CLI = join(EXTRACTOR_BUNDLE_DIR, "cli.mjs");

const OPTIONS = {
  entryPoints: { main: join(ROOT, "extractor/main.ts"), cli: join(ROOT, "extractor/cli.ts") },
  outdir: EXTRACTOR_BUNDLE_DIR,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  packages: "external",
  write: false,
  logLevel: "error",
  metafile: true,
};
/** What the last build read and wrote, with a hash of their bytes: see upToDate. */
const MANIFEST = join(EXTRACTOR_BUNDLE_DIR, "inputs.json");
const OUTPUTS = [EXTRACTOR_MAIN, EXTRACTOR_CLI];

/** A hash of the build's options, esbuild's version and every named file's bytes. */
function hashOf(files) {
  const hash = createHash("sha256").update(JSON.stringify(OPTIONS)).update(esbuildVersion);
  for (const file of files) hash.update(file).update("\0").update(readFileSync(file));
  return hash.digest("hex");
}

/**
 * Whether the bundles on disk are what a build would write now: the manifest's hash, taken over
 * the last build's inputs and its outputs, matches their bytes now. A changed, moved or deleted
 * source changes it (a new file is only read through one that changed to import it).
 */
function upToDate() {
  try {
    const { inputs, hash } = JSON.parse(readFileSync(MANIFEST, "utf8"));
    return hashOf([...inputs.map((input) => join(ROOT, input)), ...OUTPUTS]) === hash;
  } catch {
    return false;
  }
}

/** Writes under a temporary name and renames into place. */
async function publish(path, contents) {
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temporary, contents);
  await rename(temporary, path);
}

/**
 * Builds both bundles, unless those on disk were built from the sources as they are now
 * (`force` builds anyway). Each file is written under a temporary name and renamed into place,
 * so stacks that build at once (test files run side by side) never start a half-written file;
 * the manifest is written last.
 */
export async function buildExtractor({ force = false } = {}) {
  if (!force && upToDate()) return;
  const result = await build(OPTIONS);
  await mkdir(EXTRACTOR_BUNDLE_DIR, { recursive: true });
  await Promise.all(result.outputFiles.map((file) => publish(file.path, file.contents)));
  // Paths as esbuild names them: relative to the working directory, which is ROOT for every
  // caller (npm scripts, the stack, the tests); made relative to ROOT here to be sure.
  const inputs = Object.keys(result.metafile.inputs).map((input) =>
    relative(ROOT, resolve(process.cwd(), input)),
  );
  const hash = hashOf([...inputs.map((input) => join(ROOT, input)), ...OUTPUTS]);
  await publish(MANIFEST, JSON.stringify({ inputs, hash }));
}

if (process.argv[1] === import.meta.filename) {
  await buildExtractor({ force: true });
  console.log(`built ${EXTRACTOR_MAIN} and ${EXTRACTOR_CLI}`);
}
