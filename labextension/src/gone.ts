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
/** The header's status word ("running", "paused", ...), which the dead kernel can no longer update. */
export const STATUS_SELECTOR = '.kernelopt-status';
/** A gate badge: its tooltip is the gate's diagnostic, which stays readable on a record. */
export const GATE_CLASS = 'kernelopt-gate';
const CONTROLS = 'button, input, select, textarea';
/** The panel's message line, which names what a pause offers. */
export const MESSAGE_SELECTOR = '.kernelopt-message';
/** The statuses of a session still going when its kernel went. */
const LIVE_STATUSES = ['starting', 'running', 'paused'];

export interface IElementLike {
  readonly classList: { contains(name: string): boolean; add(name: string): void };
  textContent: string | null;
  disabled?: boolean;
  title?: string;
  style?: { color: string };
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
 * A session that was still going when its kernel went ended with it: its header must not go
 * on saying "running" (in green) or "paused".
 */
function endStatus(status: IElementLike | null, why: string): void {
  const word = status?.textContent?.trim() ?? '';
  if (!status || !LIVE_STATUSES.includes(word)) {
    return;
  }
  status.textContent = `ended: the kernel ${why === 'been replaced' ? 'was replaced' : why}`;
  if (status.style) {
    status.style.color = '#9a6700';
  }
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
      if (!controls[j].classList.contains(GATE_CLASS)) {
        controls[j].title = text;
      }
    }
    endStatus(panel.querySelector(STATUS_SELECTOR), why);
    const message = panel.querySelector(MESSAGE_SELECTOR);
    if (message?.textContent?.trim().startsWith('Paused after')) {
      // Its offers (Next, Approve, Edit) reach nothing now.
      message.textContent = 'The search was paused here when its kernel went.';
    }
    panel.prepend(makeBanner(text));
    marked++;
  }
  return marked;
}
