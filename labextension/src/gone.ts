/**
 * A KernelOPT panel whose kernel has gone (restarted, shut down, replaced) still shows its
 * widgets, but their buttons reach nothing. This marks such panels: a banner that says so and
 * names the command that reopens the saved session, and every control disabled with the reason.
 *
 * Written against a small slice of the DOM so that it is tested without a browser.
 */

export const PANEL_SELECTOR = '.kernelopt-panel';
export const GONE_CLASS = 'kernelopt-gone';
export const BANNER_CLASS = 'kernelopt-gone-banner';
/** The panel's header carries its session folder in a hidden element of this class. */
export const OUTDIR_SELECTOR = '.kernelopt-outdir';
const CONTROLS = 'button, input, select, textarea';

export interface IElementLike {
  readonly classList: { contains(name: string): boolean; add(name: string): void };
  textContent: string | null;
  disabled?: boolean;
  title?: string;
  querySelector(selector: string): IElementLike | null;
  querySelectorAll(selector: string): ArrayLike<IElementLike>;
  prepend(node: IElementLike): void;
}

/** What the banner says; `why` is 'restarted', 'shut down' or 'been replaced'. */
export function goneMessage(outDir: string | null, why: string): string {
  const reopen = outDir
    ? `%kernelopt open ${outDir} --resume`
    : '%kernelopt sessions (then %kernelopt open DIR --resume)';
  return (
    `The kernel that ran this session has ${why}: this panel is a record now and its buttons ` +
    `do nothing. To see the session again or continue it, run ${reopen} in a cell.`
  );
}

/**
 * Mark every not yet marked panel under `root`; `makeBanner` creates the banner element.
 * Returns how many panels were marked.
 */
export function markPanelsGone(
  root: IElementLike,
  why: string,
  makeBanner: (text: string) => IElementLike
): number {
  let marked = 0;
  const panels = root.querySelectorAll(PANEL_SELECTOR);
  for (let i = 0; i < panels.length; i++) {
    const panel = panels[i];
    if (panel.classList.contains(GONE_CLASS)) {
      continue;
    }
    panel.classList.add(GONE_CLASS);
    const folder = panel.querySelector(OUTDIR_SELECTOR)?.textContent?.trim() || null;
    const text = goneMessage(folder, why);
    const controls = panel.querySelectorAll(CONTROLS);
    for (let j = 0; j < controls.length; j++) {
      controls[j].disabled = true;
      controls[j].title = text;
    }
    panel.prepend(makeBanner(text));
    marked++;
  }
  return marked;
}
