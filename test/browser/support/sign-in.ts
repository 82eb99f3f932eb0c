// Signs a browser page in as a new address the way a person does: the sign-in form, then the
// code from the local outbox (the stack's D1), then the dashboard.
import type { Page } from "playwright-core";
import type { Harness } from "../../e2e/support/harness.ts";

export async function signIn(page: Page, h: Harness, email: string): Promise<void> {
  await page.goto(`${h.stack.baseUrl}/sign-in`);
  await page.locator("#email").fill(email);
  await page.locator("#email").press("Enter");
  await page.waitForURL(/\/sign-in\/code\?/);
  const [row] = await h.query(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC LIMIT 1",
    [email],
  );
  await page.locator("#code").fill(String(row?.code ?? ""));
  await page.locator("#code").press("Enter");
  await page.waitForURL(`${h.stack.baseUrl}/dashboard`);
}
