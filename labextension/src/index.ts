/**
 * KernelOPT for Jupyter, front-end half of the notebook bridge.
 *
 * On every kernel of every notebook panel it registers the comm target `kernelopt.notebook`.
 * The kernel side (kernelopt_jupyter/bridge.py) opens a comm carrying an `insert_cell`
 * request; this extension inserts the code cell directly below the named cell (or replaces
 * its source) through the notebook's shared model and replies on the comm.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { applyInsert, ISharedNotebookLike } from './apply';
import { COMM_TARGET, isForThisClient, makeReply, parseRequest } from './protocol';

export * from './protocol';
export * from './apply';

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
  const parsed = parseRequest(msg.content.data);
  const reply = (status: 'ok' | 'error', requestId: string, detail: string): void => {
    comm.send(makeReply(requestId, status, detail) as any);
    comm.close();
  };
  if (!parsed.ok) {
    reply('error', parsed.requestId, parsed.error);
    return;
  }
  const req = parsed.request;
  // Fall back to the session of the message that was being handled when the kernel opened
  // the comm (the click's or the cell run's browser).
  const origin = req.origin ?? (msg.parent_header as any)?.session ?? null;
  if (!isForThisClient(origin || null, kernel.clientId)) {
    // Another collaborator's browser caused this request and will answer it. Forget the comm
    // locally: closing it would tell the kernel, possibly before that browser's reply.
    comm.dispose();
    return;
  }
  if (req.action === 'ping') {
    reply('ok', req.requestId, 'kernelopt-jupyter labextension');
    return;
  }
  const notebooks = sharedNotebooksOf(tracker, kernel);
  if (notebooks.length === 0) {
    reply('error', req.requestId, 'no open notebook uses this kernel');
    return;
  }
  for (const nb of notebooks) {
    try {
      const outcome = applyInsert(nb, req);
      if (outcome.status === 'ok') {
        reply('ok', req.requestId, outcome.detail);
        return;
      }
    } catch (err) {
      reply('error', req.requestId, `editing the notebook failed: ${String(err)}`);
      return;
    }
  }
  reply('error', req.requestId, `no cell with id ${req.cellId} in the notebook`);
}

function register(tracker: INotebookTracker, kernel: Kernel.IKernelConnection | null | undefined): void {
  if (!kernel || registered.has(kernel)) {
    return;
  }
  registered.add(kernel);
  kernel.registerCommTarget(COMM_TARGET, (comm, msg) => handleOpen(tracker, kernel, comm, msg));
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'kernelopt-jupyter:bridge',
  description: 'Inserts candidates accepted in the KernelOPT panel into the notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const watch = (panel: NotebookPanel): void => {
      const ctx = panel.sessionContext;
      register(tracker, ctx.session?.kernel);
      ctx.kernelChanged.connect((_, change) => register(tracker, change.newValue));
    };
    tracker.forEach(watch);
    tracker.widgetAdded.connect((_, panel) => watch(panel));
  }
};

export default plugin;
