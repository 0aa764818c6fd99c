/**
 * A KernelOPT panel's output in a saved notebook.
 *
 * The kernel side (kernelopt_jupyter/notebook/snapshot.py) displays each panel with its widget
 * view and `PANEL_MIME` beside it, then a snapshot (a chart and a summary). The widget's model
 * lives in the kernel that drew it: reopened with another kernel, or none, ipywidgets would draw
 * "Error displaying widget: model not found". This renderer draws the widget only while the
 * notebook's kernel still holds the panel's model, and otherwise one line pointing at the
 * snapshot below.
 *
 * The decisions here touch no JupyterLab object, so they are unit-tested without a browser.
 */

/** The panel output's own mime type, preferred over the widget view it carries. */
export const PANEL_MIME = 'application/vnd.kernelopt.panel+json';

/** ipywidgets' view of a widget model. */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';

/** ipywidgets' comm target: the kernel's open comms on it are its live widget models. */
export const WIDGET_COMM_TARGET = 'jupyter.widget';

/** The class of a panel output drawn as the one-line record. */
export const RECORD_CLASS = 'kernelopt-panel-record';

/** What a panel whose kernel no longer holds it says in its place. */
export const RECORD_TEXT =
  'KernelOPT panel: it ended with the kernel that drew it. Its snapshot (chart and summary) is ' +
  'below; run the cell again for a live panel.';

/** What the output's `PANEL_MIME` data names. */
export interface IPanelData {
  /** The ipywidgets model id of the panel (its comm id). */
  modelId: string;
  /** The session id of the front-end connection that ran the cell. */
  origin: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The panel's model id and origin from an output's data, or null when they are missing. */
export function panelData(data: Record<string, unknown>): IPanelData | null {
  const panel = data[PANEL_MIME];
  const view = data[WIDGET_VIEW_MIME];
  const modelId = isRecord(view) ? view['model_id'] : undefined;
  if (!isRecord(panel) || typeof modelId !== 'string' || modelId === '') {
    return null;
  }
  const origin = typeof panel['origin'] === 'string' ? panel['origin'] : '';
  return { modelId, origin };
}

/** The part of a kernel connection the decision needs. */
export interface IKernelLike {
  readonly clientId: string;
  requestCommInfo(content: { target_name: string }): Promise<{ content: unknown }>;
}

/**
 * Whether `kernel` still holds the panel's widget model: the connection that ran the cell
 * knows at once (the kernel may be busy with the next cell); any other asks the kernel for
 * its open widget comms.
 */
export async function panelIsLive(panel: IPanelData, kernel: IKernelLike | null): Promise<boolean> {
  if (kernel === null) {
    return false;
  }
  if (panel.origin !== '' && panel.origin === kernel.clientId) {
    return true;
  }
  try {
    const reply = await kernel.requestCommInfo({ target_name: WIDGET_COMM_TARGET });
    const content = reply.content;
    const comms = isRecord(content) && isRecord(content['comms']) ? content['comms'] : {};
    return panel.modelId in comms;
  } catch {
    return false; // a kernel that cannot answer holds no panel this page can draw
  }
}
