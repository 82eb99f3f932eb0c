// A code block with a copy button. The button is hidden until copy.client.js runs, so a page
// without scripts shows no button that does nothing. A page using it loads COPY_JS.

import copyScript from "./assets/copy.client.js";
import { JS_TYPE, staticAsset } from "./assets.ts";

export const COPY_JS = staticAsset("/assets/copy.js", JS_TYPE, copyScript);

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
