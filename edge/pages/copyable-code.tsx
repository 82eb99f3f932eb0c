// A code block with a copy button. The button is hidden until the site's script (every page
// loads it, see layout.tsx) shows it, so a page without scripts shows no button that does
// nothing.

import { SITE_JS } from "./assets.ts";

/**
 * The script the copy buttons need. Every page loads it already (Page dedupes), so naming it in
 * a page's `scripts` is harmless; kept for the pages that still do.
 */
export const COPY_JS = SITE_JS;

export function CopyableCode(props: { id: string; label: string; children: string }) {
  return (
    <div class="copyable">
      {/* Focusable so a keyboard alone can scroll a long line. */}
      <pre id={props.id} tabindex={0}>
        <code>{props.children}</code>
      </pre>
      <div class="copy-row">
        <button type="button" class="button-secondary copy-button" data-copy={props.id} hidden>
          Copy<span class="sr-only"> the {props.label.toLowerCase()}</span>
        </button>
        <output class="copy-status" />
      </div>
    </div>
  );
}
