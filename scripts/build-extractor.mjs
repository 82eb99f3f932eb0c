// The extractor as production runs it: `extractor/main.ts` (the service) and `extractor/cli.ts`
// (one job, for the bench) bundled by esbuild into dist/extractor/*.mjs, our own modules and
// schema/ in one file each, packages from node_modules as they are (sharp is native). Not
// minified: a stack trace names our functions, and each module's code follows a comment with
// its path.
//   npm run build:extractor   (or node scripts/build-extractor.mjs: the image's build stage)
// The local stack and the bench build it before they start the extractor (~50 ms).
//
// Why: Node's type stripping is a TypeScript parser loaded into every extractor process.
// Measured on the bench's 2160p PNG job, the extractor's Node held ~15 MB less at the peak
// when it ran the bundle (the sources stay the truth: tests and the CLI still run them).
import { randomBytes } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

const ROOT = join(import.meta.dirname, "..");
export const EXTRACTOR_BUNDLE_DIR = join(ROOT, "dist", "extractor");
/** The service, as the image starts it. */
export const EXTRACTOR_MAIN = join(EXTRACTOR_BUNDLE_DIR, "main.mjs");
/** One job from the command line (extractor/cli.ts), as the bench runs it. */
export const EXTRACTOR_CLI = join(EXTRACTOR_BUNDLE_DIR, "cli.mjs");

/**
 * Builds both bundles. Each file is written under a temporary name and renamed into place, so
 * stacks that build at once (test files run side by side) never start a half-written file.
 */
export async function buildExtractor() {
  const result = await build({
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
  });
  await mkdir(EXTRACTOR_BUNDLE_DIR, { recursive: true });
  await Promise.all(
    result.outputFiles.map(async (file) => {
      const temporary = `${file.path}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
      await writeFile(temporary, file.contents);
      await rename(temporary, file.path);
    }),
  );
}

if (process.argv[1] === import.meta.filename) {
  await buildExtractor();
  console.log(`built ${EXTRACTOR_MAIN} and ${EXTRACTOR_CLI}`);
}
