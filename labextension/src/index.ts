/**
 * KernelOPT for Jupyter, front-end half of the notebook bridge.
 *
 * On every kernel of every notebook panel it registers the comm target `kernelopt.notebook`.
 * The kernel side (kernelopt_jupyter/notebook/bridge.py) opens a comm carrying an `insert_cell`
 * request; this extension inserts the code cell directly below the named cell (or replaces
 * its source) through the notebook's shared model and replies on the comm. It also draws a
 * panel's output (`PANEL_MIME`) as the widget while its kernel holds it, else as a record.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { Panel } from '@lumino/widgets';

import { ISharedNotebookLike } from './apply';
import { BANNER_CLASS, IElementLike, markPanelsGone } from './gone';
import { handleRequest } from './handler';
import { COMM_TARGET, PATH_TARGET, pathMessage } from './protocol';
import { PANEL_MIME, RECORD_CLASS, RECORD_TEXT, WIDGET_VIEW_MIME, panelData, panelIsLive } from './record';

export * from './protocol';
export * from './apply';
export * from './handler';
export * from './gone';
export * from './record';

/** Kernel connections already carrying our comm target. */
const registered = new WeakSet<Kernel.IKernelConnection>();

function sharedNotebooksOf(
  tracker: INotebookTracker,
  kernel: Kernel.IKernelConnection
): ISharedNotebookLike[] {
  const found: ISharedNotebookLike[] = [];
  tracker.forEach((panel: NotebookPanel) => {
    const model = panel.content.model;
    if (model && panel.sessionContext.session?.kernel === kernel) {
      const shared = model.sharedModel as unknown as ISharedNotebookLike;
      if (!found.includes(shared)) {
        found.push(shared);
      }
    }
  });
  return found;
}

function handleOpen(
  tracker: INotebookTracker,
  kernel: Kernel.IKernelConnection,
  comm: Kernel.IComm,
  msg: KernelMessage.ICommOpenMsg
): void {
  const parentSession = (msg.parent_header as Partial<KernelMessage.IHeader>)?.session ?? null;
  const reply = handleRequest({
    data: msg.content.data,
    parentSession,
    clientId: kernel.clientId,
    notebooks: () => sharedNotebooksOf(tracker, kernel)
  });
  if (reply === null) {
    // Another collaborator's browser caused this request and will answer it. Forget the comm
    // locally: closing it would tell the kernel, possibly before that browser's reply.
    comm.dispose();
    return;
  }
  comm.send(reply as unknown as Parameters<Kernel.IComm['send']>[0]);
  comm.close();
}

function register(tracker: INotebookTracker, kernel: Kernel.IKernelConnection | null | undefined): void {
  if (!kernel || registered.has(kernel)) {
    return;
  }
  registered.add(kernel);
  kernel.registerCommTarget(COMM_TARGET, (comm, msg) => handleOpen(tracker, kernel, comm, msg));
}

/** Tell every KernelOPT panel of `panel` that its kernel has gone. */
/** ipywidgets marks each dead widget with an icon; our one banner says it once instead. */
const GONE_STYLE =
  '.kernelopt-gone .jupyter-widgets-disconnected::before { display: none !important; }';

function addGoneStyle(): void {
  if (document.getElementById('kernelopt-gone-style')) {
    return;
  }
  const style = document.createElement('style');
  style.id = 'kernelopt-gone-style';
  style.textContent = GONE_STYLE;
  document.head.appendChild(style);
}

function markGone(panel: NotebookPanel, why: string): void {
  addGoneStyle();
  markPanelsGone(panel.content.node as unknown as IElementLike, why, text => {
    const banner = document.createElement('div');
    banner.className = BANNER_CLASS;
    banner.style.cssText =
      'background:#fff8c5;border:1px solid #d4a72c;border-radius:3px;padding:4px 8px;margin:4px 0';
    banner.textContent = text;
    return banner as unknown as IElementLike;
  });
}

/**
 * A panel's output: the ipywidgets view while the notebook's kernel holds the panel's model,
 * else one line pointing at the snapshot the kernel drew below it.
 */
class PanelOutput extends Panel implements IRenderMime.IRenderer {
  constructor(private readonly notebook: NotebookPanel) {
    super();
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.widgets.slice().forEach(w => w.dispose());
    this.removeClass(RECORD_CLASS);
    this.node.textContent = '';
    const panel = panelData(model.data as Record<string, unknown>);
    const ctx = this.notebook.sessionContext;
    let kernel = ctx.session?.kernel ?? null;
    if (panel && (kernel === null || panel.origin !== kernel.clientId)) {
      // A reopened notebook: its kernel may still be starting, or fail to (then no kernel).
      await ctx.ready.catch(() => undefined);
      kernel = ctx.session?.kernel ?? null;
    }
    if (panel && (await panelIsLive(panel, kernel))) {
      const view = this.notebook.content.rendermime.createRenderer(WIDGET_VIEW_MIME);
      this.addWidget(view);
      return view.renderModel(model);
    }
    this.addClass(RECORD_CLASS);
    this.node.style.cssText = 'color:#57606a;font-style:italic;padding:2px 0';
    this.node.textContent = RECORD_TEXT;
  }
}

/** Ahead of ipywidgets' own view (rank -10): lower ranks are preferred. */
const PANEL_RANK = -100;

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'kernelopt-jupyter:bridge',
  description: 'Inserts candidates accepted in the KernelOPT panel into the notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    // Each notebook's own renderers (ipywidgets adds its view there, bound to the notebook's
    // widget manager): added as the notebook is created, before its outputs are drawn.
    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (panel: NotebookPanel): void => {
        panel.content.rendermime.addFactory(
          { safe: false, mimeTypes: [PANEL_MIME], createRenderer: () => new PanelOutput(panel) },
          PANEL_RANK
        );
      }
    });
    const watch = (panel: NotebookPanel): void => {
      const ctx = panel.sessionContext;
      register(tracker, ctx.session?.kernel);
      ctx.kernelChanged.connect((_, change) => {
        register(tracker, change.newValue);
        if (change.oldValue) {
          markGone(panel, change.newValue ? 'been replaced' : 'shut down');
        }
      });
      // The panels' widgets live in the kernel: a restart or a death leaves them unanswered.
      ctx.statusChanged.connect((_, status) => {
        if (status === 'restarting' || status === 'autorestarting') {
          markGone(panel, 'restarted');
        } else if (status === 'dead') {
          markGone(panel, 'shut down');
        }
      });
    };
    tracker.forEach(watch);
    tracker.widgetAdded.connect((_, panel) => watch(panel));
    // Before a %%kernelopt cell runs, the kernel learns the notebook's current path (the
    // notebook may have been renamed since the kernel started).
    NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
      const panel = tracker.find(p => p.content === notebook);
      const kernel = panel?.sessionContext.session?.kernel;
      const message = panel ? pathMessage(cell.model.sharedModel.getSource(), panel.sessionContext.path) : null;
      if (!kernel || !message) {
        return;
      }
      const comm = kernel.createComm(PATH_TARGET);
      void comm.open(message as unknown as Parameters<Kernel.IComm['open']>[0]).done.then(() => comm.close());
    });
  }
};

export default plugin;
