/**
 * KernelOPT for Jupyter, front-end half of the notebook bridge.
 *
 * On every kernel of every notebook panel it registers the comm target `kernelopt.notebook`.
 * The kernel side (kernelopt_jupyter/notebook/bridge.py) opens a comm carrying an `insert_cell`
 * request; this extension inserts the code cell directly below the named cell (or replaces
 * its source) through the notebook's shared model and replies on the comm.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { ISharedNotebookLike } from './apply';
import { handleRequest } from './handler';
import { COMM_TARGET } from './protocol';

export * from './protocol';
export * from './apply';
export * from './handler';

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
