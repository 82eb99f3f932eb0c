// The SDK's types are what openapi-typescript generates from the served document, and its
// version follows the document's: a change to the API that the SDK's types do not carry fails
// here (issue 37). After a deliberate change to the API, rewrite the types with
//   STILLS_UPDATE_CONTRACT=1 npm test -- test/e2e/contract.test.ts
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../../sdk/src/version.ts";
import { CLIENT_TYPES_FILE, generateClientTypes } from "../contract/generate.ts";
import { type Harness, startHarness } from "../e2e/support/harness.ts";

const SDK_PACKAGE = fileURLToPath(new URL("../../sdk/package.json", import.meta.url));

let h: Harness;
let document: { info: { version: string } } & Record<string, unknown>;

beforeAll(async () => {
  h = await startHarness();
  document = (await (await fetch(`${h.stack.apiUrl}/openapi.json`)).json()) as typeof document;
});

afterAll(async () => {
  await h?.close();
});

describe("the SDK and the served document", () => {
  it("carries exactly the types the document generates", async () => {
    const generated = await generateClientTypes(document);
    expect(readFileSync(CLIENT_TYPES_FILE, "utf8")).toBe(generated);
  });

  it("has the document's major and minor version, in the package and in the code", () => {
    const pkg = JSON.parse(readFileSync(SDK_PACKAGE, "utf8")) as { version: string };
    expect(pkg.version).toBe(VERSION);
    const majorMinor = (v: string) => v.split(".").slice(0, 2).join(".");
    expect(majorMinor(VERSION)).toBe(majorMinor(document.info.version));
  });
});
